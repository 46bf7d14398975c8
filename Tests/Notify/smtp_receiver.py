#!/usr/bin/env python3
"""A real SMTP server on loopback for the e-mail hook tests (NotifyTests): aiosmtpd with
STARTTLS required (a throwaway self-signed certificate made here with openssl) and AUTH
PLAIN/LOGIN against one user. Every message accepted is appended to OUT as one JSON line:
envelope sender, recipients, the login used, whether the session was TLS, and the raw message.

Usage: smtp_receiver.py DIR USER PASSWORD. Writes DIR/cert.pem (the CA file to trust), then
prints the port on stdout and serves until stdin closes.
"""
import json
import os
import socket
import ssl
import subprocess
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


def main():
    directory, user, password = sys.argv[1], sys.argv[2], sys.argv[3]
    cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    out = os.path.join(directory, "messages.jsonl")

    def authenticate(server, session, envelope, mechanism, auth_data):
        if isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user and auth_data.password.decode() == password:
            return AuthResult(success=True, auth_data=auth_data)
        return AuthResult(success=False, handled=False)

    class Handler:
        async def handle_DATA(self, server, session, envelope):
            with open(out, "a") as f:
                f.write(json.dumps({
                    "mail_from": envelope.mail_from,
                    "rcpt_tos": envelope.rcpt_tos,
                    "login": session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None,
                    "tls": session.ssl is not None,
                    "content": envelope.original_content.decode("utf-8", "replace"),
                }) + "\n")
            return "250 Message accepted"

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    controller = Controller(Handler(), hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True,
                            auth_required=True, auth_require_tls=True, authenticator=authenticate)
    controller.start()
    print(port, flush=True)
    sys.stdin.read()
    controller.stop()


if __name__ == "__main__":
    main()
