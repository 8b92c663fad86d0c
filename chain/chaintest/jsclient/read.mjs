// read.mjs reads a Token-2022 mint and one of its token accounts from a
// Solana JSON-RPC endpoint with the official JavaScript SDK (@solana/kit)
// and the Token-2022 program client (@solana-program/token-2022), and
// prints what they decoded as one JSON object on stdout.
//
//   node read.mjs <rpc-url> <mint-address> <token-account-address>
//
// jsclient_test.go runs it against the loopback cluster (chain/chaintest)
// and compares every field with what the Go side wrote. Any failure (an RPC
// error, a decoder that rejects the bytes) goes to stderr with exit code 1.

import { address, createSolanaRpc, unwrapOption } from '@solana/kit';
import {
  TOKEN_2022_PROGRAM_ADDRESS,
  fetchAllMint,
  fetchAllToken,
  fetchMint,
  fetchToken,
  getTokenDecoder,
} from '@solana-program/token-2022';

const [url, mintArg, tokenArg] = process.argv.slice(2);
if (!url || !mintArg || !tokenArg) {
  process.stderr.write('usage: node read.mjs <rpc-url> <mint-address> <token-account-address>\n');
  process.exit(2);
}

// orNull turns a kit Option (or an absent value) into the value or null.
const orNull = (o) => (o === undefined ? null : unwrapOption(o));

// extension renders one decoded extension; unknown kinds keep their kind
// only, so a surprise shows up in the output instead of being dropped.
function extension(e) {
  switch (e.__kind) {
    case 'TransferFeeConfig':
      return {
        kind: e.__kind,
        transferFeeConfigAuthority: e.transferFeeConfigAuthority,
        withdrawWithheldAuthority: e.withdrawWithheldAuthority,
        withheldAmount: e.withheldAmount,
        olderTransferFee: fee(e.olderTransferFee),
        newerTransferFee: fee(e.newerTransferFee),
      };
    case 'MetadataPointer':
      return { kind: e.__kind, authority: orNull(e.authority), metadataAddress: orNull(e.metadataAddress) };
    case 'TokenMetadata':
      return {
        kind: e.__kind,
        updateAuthority: orNull(e.updateAuthority),
        mint: e.mint,
        name: e.name,
        symbol: e.symbol,
        uri: e.uri,
        additionalMetadata: Object.fromEntries(e.additionalMetadata),
      };
    case 'TransferFeeAmount':
      return { kind: e.__kind, withheldAmount: e.withheldAmount };
    case 'ImmutableOwner':
      return { kind: e.__kind };
    default:
      return { kind: e.__kind };
  }
}

function fee(f) {
  return { epoch: f.epoch, maximumFee: f.maximumFee, transferFeeBasisPoints: f.transferFeeBasisPoints };
}

function account(a) {
  return {
    address: a.address,
    programAddress: a.programAddress,
    lamports: a.lamports,
    space: a.space,
    executable: a.executable,
  };
}

// sameData compares two decoded accounts by their JSON rendering.
const sameData = (a, b) => JSON.stringify(a.data, replacer) === JSON.stringify(b.data, replacer);

// replacer writes bigints as decimal strings and Maps as objects.
function replacer(_key, value) {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Map) return Object.fromEntries(value);
  return value;
}

async function main() {
  const rpc = createSolanaRpc(url);
  const mintAddress = address(mintArg);
  const tokenAddress = address(tokenArg);

  // getAccountInfo (base64) through the program client's decoders.
  const mint = await fetchMint(rpc, mintAddress);
  const token = await fetchToken(rpc, tokenAddress);

  // The same accounts through getMultipleAccounts.
  const [mintAgain] = await fetchAllMint(rpc, [mintAddress]);
  const [tokenAgain] = await fetchAllToken(rpc, [tokenAddress]);

  // The owner's token accounts of the Token-2022 program (base64).
  const owned = await rpc
    .getTokenAccountsByOwner(token.data.owner, { programId: TOKEN_2022_PROGRAM_ADDRESS }, { encoding: 'base64' })
    .send();
  const decoder = getTokenDecoder();
  const ownedAccounts = owned.value.map(({ pubkey, account: a }) => {
    const t = decoder.decode(Buffer.from(a.data[0], 'base64'));
    return { pubkey, owner: a.owner, mint: t.mint, amount: t.amount };
  });

  const balance = await rpc.getTokenAccountBalance(tokenAddress).send();
  const epochInfo = await rpc.getEpochInfo().send();
  const genesisHash = await rpc.getGenesisHash().send();

  const out = {
    mint: {
      account: account(mint),
      decimals: mint.data.decimals,
      supply: mint.data.supply,
      isInitialized: mint.data.isInitialized,
      mintAuthority: orNull(mint.data.mintAuthority),
      freezeAuthority: orNull(mint.data.freezeAuthority),
      extensions: (orNull(mint.data.extensions) ?? []).map(extension),
    },
    token: {
      account: account(token),
      mint: token.data.mint,
      owner: token.data.owner,
      amount: token.data.amount,
      state: token.data.state,
      delegate: orNull(token.data.delegate),
      isNative: orNull(token.data.isNative),
      delegatedAmount: token.data.delegatedAmount,
      closeAuthority: orNull(token.data.closeAuthority),
      extensions: (orNull(token.data.extensions) ?? []).map(extension),
    },
    multipleAccountsAgree: sameData(mint, mintAgain) && sameData(token, tokenAgain),
    tokenAccountsByOwner: ownedAccounts,
    balance: {
      contextSlot: balance.context.slot,
      amount: balance.value.amount,
      decimals: balance.value.decimals,
      uiAmount: balance.value.uiAmount,
      uiAmountString: balance.value.uiAmountString,
    },
    epochInfo: {
      epoch: epochInfo.epoch,
      slotIndex: epochInfo.slotIndex,
      slotsInEpoch: epochInfo.slotsInEpoch,
      absoluteSlot: epochInfo.absoluteSlot,
      blockHeight: epochInfo.blockHeight,
    },
    genesisHash,
  };
  process.stdout.write(JSON.stringify(out, replacer) + '\n');
}

main().catch((err) => {
  const context = err && err.context ? ` ${JSON.stringify(err.context, replacer)}` : '';
  process.stderr.write(`read.mjs: ${err && err.stack ? err.stack : err}${context}\n`);
  process.exit(1);
});
