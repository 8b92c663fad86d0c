package account

import "context"

// Message is one email.
type Message struct {
	To      string
	Subject string
	// Text is the plain-text body. It may carry a single-use link; it never
	// carries a password or a long-lived secret.
	Text string
}

// Mailer sends mail. The platform ships an SMTP adapter and, for the example
// host, a file mailer that writes each message under the data folder.
type Mailer interface {
	Send(ctx context.Context, m Message) error
}
