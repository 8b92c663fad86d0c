package intent

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/creatormusic/platform/access"
	"github.com/creatormusic/platform/chain/message"
	"github.com/creatormusic/platform/chain/token2022"
	"github.com/creatormusic/platform/fault"
)

func TestSubmitSignedTransaction(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	sig, signed := h.sign(it)
	out := h.submitSigned(it)
	if out.State != StateSubmitted || out.NetworkState != NetworkSubmitted || out.Signature != sig ||
		out.Origin != OriginSigned || string(out.SignedTransaction) != string(signed) || out.Version != 2 {
		t.Fatalf("%+v", out)
	}
	if h.chain.count("sendTransaction") != 0 {
		t.Fatal("submit must not send; the relay job does")
	}
	if len(h.settled) != 0 {
		t.Fatal("submit must never settle")
	}
	// The same submission again is a replay.
	again, err := h.svc.Submit(context.Background(), h.user, it.ID, SubmitRequest{Signature: sig, SignedTransactionBase64: base64Std(signed)})
	if err != nil || again.Version != 2 {
		t.Fatalf("replay: %v v%d", err, again.Version)
	}
}

func TestSubmitSignatureOnly(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	sig, signed := h.sign(it)
	out, err := h.svc.Submit(context.Background(), h.user, it.ID, SubmitRequest{Signature: sig})
	if err != nil {
		t.Fatal(err)
	}
	if out.Origin != OriginSignature || out.SignedTransaction != nil || out.State != StateSubmitted {
		t.Fatalf("%+v", out)
	}
	// The signed bytes may follow for the same signature.
	out, err = h.svc.Submit(context.Background(), h.user, it.ID, SubmitRequest{Signature: sig, SignedTransactionBase64: base64Std(signed)})
	if err != nil || out.Origin != OriginSigned || out.SignedTransaction == nil {
		t.Fatalf("attach: %v %+v", err, out.Origin)
	}
}

func TestSubmitRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("message differs", func(t *testing.T) {
		h := newHarness(t, feeMint(6, 200, 5_000_000))
		it := h.create()
		msg := append([]byte(nil), it.Transaction.Message...)
		msg[len(msg)-1] ^= 1 // the fee byte of TransferCheckedWithFee
		sig := ed25519.Sign(h.payerKey, msg)
		b := append(message.AppendCompactU16(nil, 1), sig...)
		b = append(b, msg...)
		_, err := h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: token2022.EncodeBase58(sig), SignedTransactionBase64: base64Std(b)})
		wantCode(t, err, fault.SignatureRejected)
		if h.store.intent(it.ID).State != StateCreated {
			t.Fatal("state moved")
		}
	})
	t.Run("signed by another key", func(t *testing.T) {
		h := newHarness(t, feeMint(6, 200, 5_000_000))
		it := h.create()
		other, _ := keypair("other")
		sig := ed25519.Sign(other, it.Transaction.Message)
		b := append(message.AppendCompactU16(nil, 1), sig...)
		b = append(b, it.Transaction.Message...)
		_, err := h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: token2022.EncodeBase58(sig), SignedTransactionBase64: base64Std(b)})
		wantCode(t, err, fault.SignatureRejected)
	})
	t.Run("signature differs from the signed bytes", func(t *testing.T) {
		h := newHarness(t, feeMint(6, 200, 5_000_000))
		it := h.create()
		_, b := h.sign(it)
		_, err := h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: token2022.EncodeBase58(make([]byte, 64)), SignedTransactionBase64: base64Std(b)})
		wantCode(t, err, fault.SignatureRejected)
	})
	t.Run("malformed", func(t *testing.T) {
		h := newHarness(t, feeMint(6, 200, 5_000_000))
		it := h.create()
		sig, _ := h.sign(it)
		_, err := h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: "abc"})
		wantCode(t, err, fault.InvalidInput)
		_, err = h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: sig, SignedTransactionBase64: "%%%"})
		wantCode(t, err, fault.InvalidInput)
		_, err = h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: sig, SignedTransactionBase64: base64Std([]byte{1, 2})})
		wantCode(t, err, fault.InvalidInput)
	})
	t.Run("expired", func(t *testing.T) {
		h := newHarness(t, feeMint(6, 200, 5_000_000))
		it := h.create()
		h.clock.Add(DefaultTTL)
		sig, b := h.sign(it)
		_, err := h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: sig, SignedTransactionBase64: base64Std(b)})
		wantCode(t, err, fault.QuoteExpired)
	})
	t.Run("api key and stranger", func(t *testing.T) {
		h := newHarness(t, feeMint(6, 200, 5_000_000))
		it := h.create()
		sig, _ := h.sign(it)
		key := &access.Principal{Kind: access.CredentialAPIKey, TenantID: "ten_1", WorkspaceID: "ws_1", UserID: "usr_1", KeyID: "k", Environment: access.Test}
		_, err := h.svc.Submit(ctx, key, it.ID, SubmitRequest{Signature: sig})
		wantCode(t, err, fault.AccessDenied)
		other := *h.user
		other.UserID = "usr_2"
		_, err = h.svc.Submit(ctx, &other, it.ID, SubmitRequest{Signature: sig})
		wantCode(t, err, fault.NotFound)
	})
	t.Run("tampered economics", func(t *testing.T) {
		h := newHarness(t, feeMint(6, 200, 5_000_000))
		it := h.create()
		bad := h.store.intent(it.ID)
		bad.NetAtomic = 1
		h.store.put(bad)
		sig, _ := h.sign(it)
		_, err := h.svc.Submit(ctx, h.user, it.ID, SubmitRequest{Signature: sig})
		wantCode(t, err, fault.VerificationFailed)
	})
}

func TestSubmitSignatureReusedForAnotherIntent(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	a, b := h.create(), h.create()
	sig, _ := h.sign(a)
	if _, err := h.svc.Submit(context.Background(), h.user, a.ID, SubmitRequest{Signature: sig}); err != nil {
		t.Fatal(err)
	}
	_, err := h.svc.Submit(context.Background(), h.user, b.ID, SubmitRequest{Signature: sig})
	wantCode(t, err, fault.Conflict)
	if got := h.store.intent(b.ID); got.State != StateCreated || got.Signature != "" {
		t.Fatalf("second intent moved: %s", got.State)
	}
}

func TestSubmitDifferentSignatureNeedsReview(t *testing.T) {
	h := newHarness(t, feeMint(6, 200, 5_000_000))
	it := h.create()
	h.submitSigned(it)
	other := token2022.EncodeBase58(append(make([]byte, 63), 7))
	out, err := h.svc.Submit(context.Background(), h.user, it.ID, SubmitRequest{Signature: other})
	wantCode(t, err, fault.RequiresReview)
	got := h.store.intent(it.ID)
	if got.State != StateRequiresReview || len(got.Evidence) != 1 || got.Evidence[0].Field != "signature" || out.State != StateRequiresReview {
		t.Fatalf("%s %+v", got.State, got.Evidence)
	}
}
