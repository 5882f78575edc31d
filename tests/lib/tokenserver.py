#!/usr/bin/env python3
"""A Bearer-token service for docker-registry's token auth (oci.bats): the
registry answers 401 with WWW-Authenticate: Bearer realm=...,service=...,
scope=...; the client asks GET realm?service=S&scope=S (with Basic
credentials when it has them) and gets {"token": JWT}, an RS256 JWT signed
here with KEY whose certificate CERT (in the header's x5c) is the registry's
rootcertbundle.  Grants what the scope asks, to anyone when --user is not
given, else only with those credentials.  Logs each request to --log.
usage: tokenserver.py --key KEY --cert CERT --port-file F --log F [--user U:P]
"""
import argparse, base64, json, os, subprocess, sys, time, urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

ap = argparse.ArgumentParser()
ap.add_argument("--key"); ap.add_argument("--cert"); ap.add_argument("--port-file"); ap.add_argument("--log")
ap.add_argument("--user"); ap.add_argument("--issuer", default="cudaenv-test-issuer")
a = ap.parse_args()

def b64(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

der = subprocess.run(["openssl", "x509", "-in", a.cert, "-outform", "DER"], capture_output=True, check=True).stdout

def token(service, scope):
    access = []
    for s in scope:
        kind, name, actions = s.split(":")
        access.append({"type": kind, "name": name, "actions": actions.split(",")})
    now = int(time.time())
    head = {"alg": "RS256", "typ": "JWT", "x5c": [base64.b64encode(der).decode()]}
    claims = {"iss": a.issuer, "sub": "tester", "aud": service, "exp": now + 600, "nbf": now - 10, "iat": now,
              "jti": str(now) + str(os.getpid()), "access": access}
    signing = b64(json.dumps(head).encode()) + "." + b64(json.dumps(claims).encode())
    sig = subprocess.run(["openssl", "dgst", "-sha256", "-sign", a.key], input=signing.encode(),
                         capture_output=True, check=True).stdout
    return signing + "." + b64(sig)

class H(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        u = urllib.parse.urlparse(self.path)
        q = urllib.parse.parse_qs(u.query)
        auth = self.headers.get("Authorization", "")
        user = base64.b64decode(auth[6:]).decode() if auth.startswith("Basic ") else ""
        with open(a.log, "a") as f:
            f.write("GET %s user=%s scope=%s\n" % (u.path, user or "-", " ".join(q.get("scope", []))))
        if a.user and user != a.user:
            self.send_response(401); self.end_headers(); return
        body = json.dumps({"token": token(q.get("service", [""])[0], q.get("scope", []))}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

srv = HTTPServer(("127.0.0.1", 0), H)
with open(a.port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(a.port_file + ".tmp", a.port_file)
srv.serve_forever()
