package smtpmail

import "crypto/tls"

// tlsConfig verifies the server's certificate against host.
func tlsConfig(host string) *tls.Config {
	return &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
}
