#!/usr/bin/env python3
"""Loopback HTTP(S) server for cudaenv's download tests.  It serves one
directory and misbehaves on request.  Binds 127.0.0.1 only, on a free port.

  httpd.py --root DIR --port-file FILE --log FILE
           [--tls-cert PEM --tls-key PEM --tls-port-file FILE]

With --tls-* a second listener speaks https (same files, log and counters).

Misbehaviour is chosen per request by a path prefix: /_/<modes>/<file>, with
<modes> a comma-separated list:
  drop=N       first request of this URL: send headers + N body bytes, close
  cut=N        EVERY request: send headers + at most N body bytes, close
  endless      200 without Content-Length: the file, then zeros up to 64 MiB,
               then close; logs "SENT <path> bytes=N" with what the client took
  norange      ignore Range (answer 200 with the whole file)
  404          404 with an HTML body
  500=N        the first N requests of this URL answer 500 (HTML body)
  wait=S       sleep S seconds before answering (the client waits for the
               status line: what it left on disk is read by others meanwhile)
  stall=S      first request: headers + 1 KiB, then sleep S seconds, close
  hold=S       first request: headers, then S seconds before the first body
               byte (a transfer that began and holds no byte yet)
  longlen=N    announce N bytes more than sent, then close
  truncate=N   announce the full length, stop at file offset N, close
  nolen        no Content-Length (body ends when the connection closes)
  rate=BPS     send at about BPS bytes per second (throttle=BPS: the same)
  ratefrom=N   rate= only from the Nth request of this URL on (the first
               ones at full speed: a source that became slow)
  link=BPS     all requests with link=BPS share one link of about BPS bytes
               per second (a real line, where parallel connections do not
               add up; rate= limits each connection on its own)
  pause=S      send half of the body, pause S seconds, send the rest on the
               same connection (a stall shorter than the client's timeout)
  trickle=S    send one byte every S seconds
  endless      200 without Content-Length: the file, then zeros, until the
               client hangs up (endless=BPS: at about BPS bytes per second)
  redirect=P   302 to /P on this listener (write / inside P as %2F)
  tohttp       302 to the same file on the plain http listener
  loop         302 to this very URL
  disposition  Content-Disposition: attachment; filename="../../evil"
  noetag       no ETag / Last-Modified, and If-None-Match ignored
  frozen       every conditional request (If-None-Match or If-Modified-Since)
               gets 304, whatever the file is now (a server or a man in the
               middle that keeps a client on its old copy)
Every file is served with an ETag (inode, mtime, size) and Last-Modified; a
request whose If-None-Match is that ETag gets 304 (logged status=304).
"Per URL" counts use the whole request path, so tests stay independent by
using distinct paths; GET /_ctl/reset clears the counts.  A request with an
absolute URI (a client using us as http_proxy) is served by its path.

Every request is logged, one line: METHOD PATH range=RANGE status=CODE tls=0|1
"""
import argparse
import html
import os
import ssl
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CHUNK = 64 * 1024
LINKS = {}
LINKS_LOCK = threading.Lock()


def link_wait(bps, n):
    """Book n bytes on the shared link of bps bytes/s; sleep until sent."""
    with LINKS_LOCK:
        now = time.monotonic()
        start = max(now, LINKS.get(bps, now))
        LINKS[bps] = start + n / bps
    time.sleep(max(0.0, start + n / bps - time.monotonic()))


counts = {}
lock = threading.Lock()
args = None
plain_port = 0


def bump(key):
    with lock:
        counts[key] = counts.get(key, 0) + 1
        return counts[key]


def log_line(line):
    with lock:
        with open(args.log, "a") as f:
            f.write(line + "\n")


def parse_modes(path):
    """'/_/drop=10,norange/a.bin' -> ({'drop': '10', 'norange': ''}, '/a.bin')"""
    if not path.startswith("/_/"):
        return {}, path
    rest = path[3:]
    spec, _, tail = rest.partition("/")
    modes = {}
    for m in spec.split(","):
        k, _, v = m.partition("=")
        modes[k] = urllib.parse.unquote(v)
    return modes, "/" + tail


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "cudaenv-test-httpd"

    def log_message(self, fmt, *a):  # quiet on stderr; we keep our own log
        pass

    def record(self, status):
        rng = self.headers.get("Range") or "-"
        tls = 1 if self.server.tls else 0
        log_line(f"{self.command} {self.path} range={rng} status={status} tls={tls}")

    def html_error(self, code, text):
        body = (f"<!DOCTYPE html><html><head><title>{code} {text}</title></head>"
                f"<body><h1>{code} {text}</h1><p>{html.escape(self.path)}</p></body></html>\n").encode()
        self.record(code)
        self.send_response(code)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, location):
        self.record(302)
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_HEAD(self):
        self.handle_get()

    def do_GET(self):
        self.handle_get()

    def handle_get(self):
        path = self.path
        if path.startswith("http://") or path.startswith("https://"):
            path = urllib.parse.urlsplit(path).path  # proxy request
        path = path.split("?", 1)[0]
        if path == "/_ctl/reset":
            with lock:
                counts.clear()
            return self.html_error(200, "reset")
        modes, fpath = parse_modes(path)  # before unquoting: values may hold %2F
        fpath = urllib.parse.unquote(fpath)
        n = bump(self.path)
        if "wait" in modes:
            time.sleep(float(modes["wait"]))

        if "404" in modes:
            return self.html_error(404, "Not Found")
        if "500" in modes and n <= int(modes["500"] or 1):
            return self.html_error(500, "Internal Server Error")
        if "loop" in modes:
            return self.redirect(self.path)
        if "redirect" in modes:
            return self.redirect("/" + modes["redirect"].lstrip("/"))
        if "tohttp" in modes:
            return self.redirect(f"http://127.0.0.1:{plain_port}{fpath}")

        if "endless" in modes:
            return self.endless(fpath)

        full = os.path.realpath(os.path.join(args.root, fpath.lstrip("/")))
        root = os.path.realpath(args.root)
        if not (full == root or full.startswith(root + os.sep)) or not os.path.isfile(full):
            return self.html_error(404, "Not Found")
        size = os.path.getsize(full)
        st = os.stat(full)
        etag = '"%x-%x-%x"' % (st.st_ino, st.st_mtime_ns, size)
        frozen = "frozen" in modes and (self.headers.get("If-None-Match") or self.headers.get("If-Modified-Since"))
        if frozen or ("noetag" not in modes and self.headers.get("If-None-Match") == etag):
            self.record(304)
            self.send_response(304)
            self.send_header("ETag", etag)
            self.end_headers()
            return

        start, end, status = 0, size - 1, 200
        rng = self.headers.get("Range")
        if rng and "norange" not in modes and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            try:
                start = int(a)
                end = min(int(b), size - 1) if b else size - 1
            except ValueError:
                start, end = 0, size - 1
            if start >= size or start > end:
                self.record(416)
                self.send_response(416)
                self.send_header("Content-Range", f"bytes */{size}")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            status = 206

        if "endless" in modes:
            return self.endless(full, int(modes["endless"] or 0))
        length = end - start + 1
        stop = end + 1  # file offset after the last byte we will send
        close = False
        if "drop" in modes and n == 1:
            stop = min(stop, start + int(modes["drop"]))
            close = True
        if "cut" in modes:
            stop = min(stop, start + int(modes["cut"]))
            close = True
        if "truncate" in modes:
            stop = min(stop, max(start, int(modes["truncate"])))
            close = True
        announced = length + int(modes.get("longlen") or 0)
        if "longlen" in modes:
            close = True

        self.record(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        if "nolen" in modes:
            close = True
            self.send_header("Connection", "close")
        else:
            self.send_header("Content-Length", str(announced))
        if status == 206:
            self.send_header("Content-Range", f"bytes {start}-{end}/{size}")
        self.send_header("Accept-Ranges", "none" if "norange" in modes else "bytes")
        if "noetag" not in modes:
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", self.date_time_string(st.st_mtime))
        if "disposition" in modes:
            self.send_header("Content-Disposition", 'attachment; filename="../../evil"')
        self.end_headers()
        if self.command == "HEAD":
            return
        if "hold" in modes and n == 1:
            self.wfile.flush()
            time.sleep(float(modes["hold"]))

        rate = int(modes.get("rate") or modes.get("throttle") or 0)
        if n < int(modes.get("ratefrom") or 0):
            rate = 0
        link = int(modes.get("link") or 0)
        stall = float(modes["stall"]) if "stall" in modes and n == 1 else None
        if stall is not None:
            stop = min(stop, start + 1024)
        pause = float(modes["pause"]) if "pause" in modes else None
        pause_at = start + (stop - start) // 2
        trickle = float(modes["trickle"]) if "trickle" in modes else None
        try:
            with open(full, "rb") as f:
                f.seek(start)
                pos = start
                while pos < stop:
                    step = min(CHUNK, stop - pos)
                    if rate:
                        step = min(step, max(1, rate // 10))
                    if link:
                        step = min(step, max(1, link // 100))
                    if pause is not None and pos < pause_at:
                        step = min(step, pause_at - pos)
                    if trickle is not None:
                        step = 1
                    data = f.read(step)
                    if not data:
                        break
                    self.wfile.write(data)
                    pos += len(data)
                    if rate:
                        self.wfile.flush()
                        time.sleep(len(data) / rate)
                    if link:
                        self.wfile.flush()
                        link_wait(link, len(data))
                    if pause is not None and pos == pause_at:
                        self.wfile.flush()
                        time.sleep(pause)
                        pause = None
                    if trickle is not None:
                        self.wfile.flush()
                        time.sleep(trickle)
            self.wfile.flush()
            if stall is not None:
                time.sleep(stall)
                close = True
        except (BrokenPipeError, ConnectionResetError):
            close = True
        if close:
            self.close_connection = True

    def endless(self, full, rate):
        """The file, then zeros, until the client hangs up; no length."""
        self.record(200)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        if self.command == "HEAD":
            return
        zeros = bytes(CHUNK)
        try:
            with open(full, "rb") as f:
                data = f.read()
            while True:
                chunk = data or zeros
                data = b""
                if rate:
                    chunk = chunk[:max(1, rate // 10)]
                self.wfile.write(chunk)
                if rate:
                    self.wfile.flush()
                    time.sleep(len(chunk) / rate)
        except (BrokenPipeError, ConnectionResetError, OSError):
            pass


    def endless(self, fpath):
        full = os.path.realpath(os.path.join(args.root, fpath.lstrip("/")))
        data = open(full, "rb").read() if os.path.isfile(full) else b""
        self.record(200)
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        sent, limit, zeros = 0, 64 << 20, bytes(CHUNK)
        try:
            if data:
                self.wfile.write(data)
                sent += len(data)
            while sent < limit:
                self.wfile.write(zeros)
                sent += len(zeros)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True
        log_line(f"SENT {self.path} bytes={sent}")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    tls = False


def write_port(path, port):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(f"{port}\n")
    os.rename(tmp, path)


def main():
    global args, plain_port
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--tls-cert")
    p.add_argument("--tls-key")
    p.add_argument("--tls-port-file")
    args = p.parse_args()

    plain = Server(("127.0.0.1", 0), Handler)
    plain_port = plain.server_address[1]
    servers = [plain]
    if args.tls_cert:
        tls = Server(("127.0.0.1", 0), Handler)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls_cert, args.tls_key)
        tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
        tls.tls = True
        servers.append(tls)
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    if args.tls_cert:
        write_port(args.tls_port_file, servers[1].server_address[1])
    write_port(args.port_file, plain_port)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
