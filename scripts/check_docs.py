"""Check the built docs site in a headless browser: formulas typeset, code fits the page.

Opens every notebook page (library/, experiments/) from `file://` in headless Chromium, with no network. On the
pages with formulas (library/09_intervention, 10_utility, 12_reward) it asserts that MathJax typeset their math
(MathJax elements present, its STIX-Web fonts loaded, no MathJax error, no raw `$$` or TeX macro left in the
visible text outside code); on every page, that no math was typeset inside code (nor in the text the copy buttons
copy) and that no code block whose lines are at most 120 characters scrolls sideways at a 1440 px wide window.
Talks to the browser over the DevTools protocol on a pipe (`--remote-debugging-pipe`), so it needs no Python
package beyond the standard library.

The browser (Debian's package; as root): `apt-get install -y chromium-headless-shell` (or `chromium`).

    python scripts/check_docs.py                # builds the site into a temporary folder (rag-lib docs), checks it
    python scripts/check_docs.py --site _site   # checks a site already built
Exit status 0 when every check passes, 1 when one fails, 2 when no browser is found.
"""
from __future__ import annotations

import argparse, fcntl, json, os, shutil, subprocess, sys, tempfile, time
from pathlib import Path

PAGES = ('library/09_intervention', 'library/10_utility', 'library/12_reward')
BROWSERS = ('chromium-headless-shell', 'chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable')
WIDTH, MAX_LINE = 1440, 120

# Evaluated in the page: what the checks need, as JSON. `done` once MathJax has started and its queue is empty.
PROBE = r"""(() => {
  const mj = window.MathJax, hub = mj && mj.Hub;
  const done = !!(mj && mj.isReady && hub.queue.pending === 0 && !hub.queue.running);
  const content = document.querySelector('.md-content');
  const clone = content.cloneNode(true);
  clone.querySelectorAll('pre, code, script, style, .clipboard-copy-txt, .MathJax_Preview, .MJX_Assistive_MathML')
    .forEach(e => e.remove());
  const text = clone.textContent;
  const wide = [];
  content.querySelectorAll('pre').forEach(p => {
    const longest = Math.max(...p.textContent.split('\n').map(l => l.length));
    if (longest <= %d && p.scrollWidth > p.clientWidth + 1)
      wide.push({longest, scrollWidth: p.scrollWidth, clientWidth: p.clientWidth, head: p.textContent.slice(0, 80)});
  });
  return JSON.stringify({
    done, typeset: document.querySelectorAll('.MathJax, .MathJax_Display').length,
    sources: document.querySelectorAll('script[type^="math/tex"]').length,
    errors: document.querySelectorAll('.MathJax .merror, .MathJax .noError, .MathJax_Error').length,
    font_errors: [...document.fonts].filter(f => f.status === 'error' && f.family.startsWith('STIX')).length,
    font_loaded: [...document.fonts].filter(f => f.status === 'loaded' && f.family.startsWith('STIX')).length,
    font: mj && mj.OutputJax && mj.OutputJax['HTML-CSS'] ? mj.OutputJax['HTML-CSS'].fontInUse : null,
    in_code: document.querySelectorAll(['pre', 'code', '.clipboard-copy-txt'].map(
      s => `${s} .MathJax, ${s} .MathJax_Display, ${s} script[type^="math/tex"]`).join(', ')).length,
    raw_display: (text.match(/\$\$/g) || []).length,
    raw_tex: (text.match(/\\(frac|mathrm|text|tilde|Delta|operatorname|sum|mathbb|in|qquad)\b/g) || []).slice(0, 5),
    wide});
})()""" % MAX_LINE


class Browser:
    "Headless Chromium driven over the DevTools protocol on fds 3 (commands) and 4 (replies)."
    def __init__(self, exe: str):
        cmd_r, self._cmd_w = os.pipe(); self._res_r, res_w = os.pipe()
        def fds():   # in the child: the pipe's ends onto fds 3 and 4 (by way of fds >= 10, as they may be 3 or 4)
            a, b = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10), fcntl.fcntl(res_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3); os.dup2(b, 4)
        self.proc = subprocess.Popen(
            [exe, '--headless', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe', '--no-first-run',
             f'--window-size={WIDTH},1000', '--user-data-dir=' + tempfile.mkdtemp(), 'about:blank'],
            close_fds=False, preexec_fn=fds, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(cmd_r); os.close(res_w)
        self._id, self._buf = 0, b''
        tid = self.send('Target.createTarget', url='about:blank')['targetId']
        self.session = self.send('Target.attachToTarget', targetId=tid, flatten=True)['sessionId']
        self.send('Emulation.setDeviceMetricsOverride', session=True, width=WIDTH, height=1000, deviceScaleFactor=1,
                  mobile=False)

    def send(self, method: str, session: bool = False, **params) -> dict:
        self._id += 1
        msg = {'id': self._id, 'method': method, 'params': params}
        if session: msg['sessionId'] = self.session
        os.write(self._cmd_w, json.dumps(msg).encode() + b'\0')
        while True:
            while b'\0' not in self._buf:
                chunk = os.read(self._res_r, 1 << 16)
                if not chunk: raise RuntimeError('the browser closed its DevTools pipe')
                self._buf += chunk
            raw, self._buf = self._buf.split(b'\0', 1)
            reply = json.loads(raw)
            if reply.get('id') == self._id:
                if 'error' in reply: raise RuntimeError(f'{method}: {reply["error"]}')
                return reply.get('result', {})

    def probe(self, url: str, timeout: float = 60) -> dict:
        self.send('Page.navigate', session=True, url=url)
        t0, state = time.time(), {}
        while time.time() - t0 < timeout:
            time.sleep(0.5)
            r = self.send('Runtime.evaluate', session=True, expression=PROBE, returnByValue=True)
            if r.get('result', {}).get('type') != 'string': continue   # the page is still loading
            state = json.loads(r['result']['value'])
            if state['done']: break
        return state

    def close(self):
        self.proc.kill(); self.proc.wait()


def check(site: Path, browser: Browser) -> tuple[list[str], int]:
    "The failed checks, one line each (empty when all pass), and how many pages were checked."
    problems = [f'{page}: no index.html' for page in PAGES if not (site / page / 'index.html').is_file()]
    pages = sorted(str(p.parent.relative_to(site)) for d in ('library', 'experiments')
                   for p in (site / d).glob('*/index.html'))
    for page in pages:
        s = browser.probe((site / page / 'index.html').resolve().as_uri())
        print(f'{page}: {json.dumps(s)}')
        if s.get('in_code'): problems.append(f'{page}: {s["in_code"]} formulas typeset inside code')
        for w in s.get('wide', []):
            problems.append(f'{page}: a code block of {w["longest"]} columns scrolls sideways: {w}')
        if page not in PAGES: continue
        if not s.get('done'): problems.append(f'{page}: MathJax did not finish (is extra/mathjax/ in the site?)')
        if not s.get('typeset'): problems.append(f'{page}: no typeset formula')
        if s.get('errors'): problems.append(f'{page}: {s["errors"]} MathJax errors')
        if s.get('font_errors') or not s.get('font_loaded'): problems.append(f'{page}: the STIX-Web fonts did not load')
        if s.get('font') != 'STIX-Web': problems.append(f'{page}: MathJax used the font {s.get("font")}, not STIX-Web')
        if s.get('raw_display'): problems.append(f'{page}: {s["raw_display"]} raw $$ left in the visible text')
        if s.get('raw_tex'): problems.append(f'{page}: raw TeX left in the visible text: {s["raw_tex"]}')
    return problems, len(pages)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--site', default=None, help='a built site (default: rag-lib docs builds one in a temp folder)')
    ap.add_argument('--browser', default=None,
                    help='the browser executable (default: the first of %s on PATH)' % ', '.join(BROWSERS))
    a = ap.parse_args(argv)
    exe = a.browser or next((shutil.which(b) for b in BROWSERS if shutil.which(b)), None)
    if not exe:
        print('check_docs: no headless browser: apt-get install -y chromium-headless-shell', file=sys.stderr)
        return 2
    if a.site: site = Path(a.site)
    else:
        from rag_lib.pipeline import build_docs
        tmp = Path(tempfile.mkdtemp())
        site = build_docs(site=tmp / 'site', work=tmp / 'work')
    browser = Browser(exe)
    try: problems, n = check(site, browser)
    finally: browser.close()
    for p in problems: print(f'check_docs: FAIL {p}', file=sys.stderr)
    print(f'check_docs: {len(problems)} problems' if problems else
          f'check_docs: formulas typeset on the {len(PAGES)} pages with them; code not typeset and fitting at '
          f'{WIDTH} px on all {n} notebook pages')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
