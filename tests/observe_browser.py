#!/usr/bin/env python3
"""Drives headless Chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages ending in NUL on fds 3 and 4), in
real time, for test_observe's browser test (docs/observe.md, The page).

usage: observe_browser.py URL READY_JS READY_FILE UNTIL_JS OUT_JSON SHOT.png
(a script given as @FILE is read from FILE)

Opens URL, waits until READY_JS is true (80 s), writes READY_FILE, then
waits until UNTIL_JS is true (30 s), evaluates it again for its value,
takes a screenshot (1280x860) and writes {"value": ..., "dom": ...} to
OUT_JSON. Exit 0, or 1 with a line on stderr naming the step that timed out.
"""
import base64
import json
import os
import subprocess
import sys
import tempfile
import time

FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--disable-dev-shm-usage', '--hide-scrollbars', '--remote-debugging-pipe']


class Browser:
    def __init__(self, profile):
        to_chr_r, self.to_chr = os.pipe()
        self.from_chr, from_chr_w = os.pipe()
        # the child's fd 3 reads commands, fd 4 writes answers
        def fds():  # via fresh copies: a pipe end may already be fd 3 or 4
            r, w = os.dup(to_chr_r), os.dup(from_chr_w)
            os.dup2(r, 3)
            os.dup2(w, 4)
        self.proc = subprocess.Popen(['chromium'] + FLAGS + ['--user-data-dir=' + profile],
                                     preexec_fn=fds, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, close_fds=False)
        os.close(to_chr_r)
        os.close(from_chr_w)
        self.buf = b''
        self.next_id = 0

    def _read(self):
        while b'\0' not in self.buf:
            chunk = os.read(self.from_chr, 1 << 16)
            if not chunk:
                raise RuntimeError('chromium closed the pipe')
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = session
        os.write(self.to_chr, json.dumps(msg).encode() + b'\0')
        while True:
            m = self._read()
            if m.get('id') == self.next_id:
                if 'error' in m:
                    raise RuntimeError('%s: %s' % (method, m['error']))
                return m.get('result', {})

    def close(self):
        try:
            self.call('Browser.close')
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def evaluate(b, s, js):
    r = b.call('Runtime.evaluate', {'expression': js, 'returnByValue': True}, s)
    return r.get('result', {}).get('value')


def wait(b, s, js, what, limit=30.0):
    end = time.time() + limit
    while time.time() < end:
        if evaluate(b, s, js):
            return
        time.sleep(0.05)
    sys.stderr.write('observe_browser: timed out waiting for %s: %s\n' % (what, js))
    sys.exit(1)


def main():
    url, ready_js, ready_file, until_js, out_json, shot = sys.argv[1:7]
    # @FILE: the script is in FILE (no shell quoting in the way)
    if ready_js.startswith('@'):
        ready_js = open(ready_js[1:]).read()
    if until_js.startswith('@'):
        until_js = open(until_js[1:]).read()
    with tempfile.TemporaryDirectory(prefix='dls-chromium-') as profile:
        b = Browser(profile)
        try:
            target = b.call('Target.createTarget', {'url': 'about:blank'})['targetId']
            s = b.call('Target.attachToTarget', {'targetId': target, 'flatten': True})['sessionId']
            b.call('Page.enable', session=s)
            b.call('Emulation.setDeviceMetricsOverride',
                   {'width': 1280, 'height': 860, 'deviceScaleFactor': 1, 'mobile': False}, s)
            b.call('Page.navigate', {'url': url}, s)
            wait(b, s, ready_js, 'the page to be ready', 80.0)
            with open(ready_file, 'w') as f:
                f.write('ready\n')
            wait(b, s, until_js, 'the change')
            value = evaluate(b, s, until_js)
            time.sleep(0.3)  # let the page finish drawing this poll
            png = b.call('Page.captureScreenshot', {'format': 'png'}, s)['data']
            with open(shot, 'wb') as f:
                f.write(base64.b64decode(png))
            dom = evaluate(b, s, 'document.documentElement.outerHTML')
            with open(out_json, 'w') as f:
                json.dump({'value': value, 'dom': dom}, f)
        finally:
            b.close()


if __name__ == '__main__':
    main()
