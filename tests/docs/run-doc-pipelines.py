#!/usr/bin/env python3
"""Run every gst-launch-1.0 pipeline written in the Markdown docs.

The pipelines in README.md and docs/*.md are what users copy first, so they
must keep working with the elements as built. This script pulls each
gst-launch-1.0 command out of the fenced code blocks, makes it fit for CI
(display sinks become fakesink, at most 5 buffers, repository paths made
absolute, output files written to a temporary directory) and runs it against
the plugin in --plugin-dir, on whatever backend this machine has.

A pipeline that needs hardware this machine lacks is skipped by name (the
HARDWARE list below). Any other element that is not registered is a failure:
most likely a typo in the docs. A pipeline can be excluded explicitly with
`<!-- docs-test: skip REASON -->` on the line before its code block, or with
`# docs-test: skip REASON` (or the HTML form) directly above the command.

Exit status: 1 if any pipeline failed or none was found, 77 (skipped, for
meson) if none ran but some were skipped, 0 otherwise.
"""

import argparse
import glob
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile

# Elements that need hardware or drivers a CI machine lacks, and why.
HARDWARE = {
    'nvh264dec': 'NVDEC', 'nvh265dec': 'NVDEC', 'nvav1dec': 'NVDEC',
    'nvvp9dec': 'NVDEC', 'nvjpegdec': 'NVJPEG',
    'nvh264enc': 'NVENC', 'nvh265enc': 'NVENC',
    'cudaupload': 'a CUDA GPU', 'cudadownload': 'a CUDA GPU',
    'cudaconvertscale': 'a CUDA GPU', 'cudaconvert': 'a CUDA GPU',
    'cudascale': 'a CUDA GPU',
    'nvarguscamerasrc': 'a Jetson CSI camera', 'nvvidconv': 'a Jetson',
    'nvv4l2decoder': 'a Jetson', 'nvv4l2h264enc': 'a Jetson',
    'v4l2src': 'a V4L2 camera',
    # registered without a GPU, but has no CPU backend
    'zckernel': 'a CUDA GPU, no CPU backend',
}

DISPLAY_SINKS = {
    'autovideosink', 'ximagesink', 'xvimagesink', 'glimagesink',
    'waylandsink', 'kmssink', 'fbdevsink', 'nv3dsink', 'nveglglessink',
    'nvdrmvideosink', 'autoaudiosink',
}
# Properties of a display sink that fakesink (a GstBaseSink) has too; the
# others (display=, force-aspect-ratio=, ...) go with the sink.
SINK_PROPS_KEPT = {'name', 'sync', 'async', 'qos', 'max-lateness', 'ts-offset'}
FILE_SINKS = {'filesink', 'multifilesink', 'splitmuxsink'}
MAX_BUFFERS = 5
TIMEOUT_S = 60

FENCE = re.compile(r'^\s*(`{3,}|~{3,})')
MARKER = re.compile(r'^\s*(?:<!--\s*docs-test:\s*skip\b(.*?)-->|#\s*docs-test:\s*skip\b(.*))\s*$')
# optional prompt, optional VAR=value prefixes, then the command
COMMAND = re.compile(r'^\s*(?:\$\s+)?(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*gst-launch-1\.0(\s.*)?$')
ELEMENT = re.compile(r'^[A-Za-z][A-Za-z0-9_-]*$')
PROPERTY = re.compile(r'^([A-Za-z][A-Za-z0-9_-]*)=(.*)$', re.S)


def marker_reason(line):
    m = MARKER.match(line)
    if not m:
        return None
    return (m.group(1) or m.group(2) or '').strip() or 'no reason given'


def extract(path):
    """Yield (line number, command text, skip reason or None) for each
    gst-launch-1.0 command in the fenced code blocks of a Markdown file."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    fence = None          # the opening fence while inside a block
    block_skip = None     # marker before the block: every command in it
    pending_skip = None   # marker inside the block: the next command only
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                block_skip = marker_reason(lines[i - 1]) if i > 0 else None
                pending_skip = None
            i += 1
            continue
        if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                and not line.strip().strip(fence[0]):
            fence = None
            i += 1
            continue
        start = i
        # join backslash-continued lines into one logical line
        while line.rstrip().endswith('\\') and i + 1 < len(lines) \
                and not FENCE.match(lines[i + 1]):
            i += 1
            line = line.rstrip()[:-1] + ' ' + lines[i]
        i += 1
        reason = marker_reason(line)
        if reason is not None:
            pending_skip = reason
            continue
        if not line.strip() or line.lstrip().startswith('#'):
            continue
        m = COMMAND.match(line)
        if m:
            yield start + 1, (m.group(1) or '').strip(), block_skip or pending_skip
        pending_skip = None


def tokens(text):
    """Split a gst-launch description at unquoted blanks and '!', keeping
    each token's quotes so that the shell still sees them."""
    out, cur, quote, i = [], '', None, 0
    while i < len(text):
        c = text[i]
        if quote:
            cur += c
            if c == '\\' and quote == '"' and i + 1 < len(text):
                i += 1
                cur += text[i]
            elif c == quote:
                quote = None
        elif c in '"\'':
            quote = c
            cur += c
        elif c == '\\' and i + 1 < len(text):
            cur += c + text[i + 1]
            i += 1
        elif c.isspace() or c == '!':
            if cur:
                out.append(cur)
            cur = ''
            if c == '!':
                out.append('!')
        else:
            cur += c
        i += 1
    if cur:
        out.append(cur)
    return out


def unquote(value):
    parts = shlex.split(value)
    return parts[0] if len(parts) == 1 else value


def rewrite(args, source_root):
    """Return (CI command, element names) for the arguments of one
    gst-launch-1.0 command."""
    toks = tokens(args)
    options = []
    while toks and toks[0].startswith('-'):
        options.append(toks.pop(0))
    if '-q' not in options and '--quiet' not in options:
        options.insert(0, '-q')

    # group into [element name, [properties]] and other items (links,
    # caps, pad references), which are kept as they are
    items = []
    for t in toks:
        prop = PROPERTY.match(t)
        if prop and items and isinstance(items[-1], list):
            items[-1][1].append((prop.group(1), prop.group(2)))
        elif ELEMENT.match(t):
            items.append([t, []])
        else:
            items.append(t)

    out, names = [], []
    for item in items:
        if not isinstance(item, list):
            out.append(item)
            continue
        name, props = item
        if name in DISPLAY_SINKS:
            name = 'fakesink'
            props = [p for p in props if p[0] in SINK_PROPS_KEPT]
        names.append(name)
        new = []
        for key, value in props:
            if key == 'num-buffers':
                try:
                    n = int(unquote(value))
                except ValueError:
                    n = -1
                if n < 0 or n > MAX_BUFFERS:   # -1 is "no limit"
                    value = str(MAX_BUFFERS)
            elif key == 'location' and name in FILE_SINKS:
                # outputs land in the run's working directory
                value = shlex.quote(os.path.basename(unquote(value)))
            elif key == 'location':
                path = unquote(value)
                if path.startswith(('examples/', 'tests/')):
                    value = shlex.quote(os.path.join(source_root, path))
            new.append('%s=%s' % (key, value))
        if name == 'videotestsrc' and not any(k == 'num-buffers' for k, _ in props):
            new.append('num-buffers=%d' % MAX_BUFFERS)
        out.append(' '.join([name] + new))
    return 'gst-launch-1.0 ' + ' '.join(options + out), names


class Registry:
    """Which elements exist, asked of gst-inspect-1.0 in the test's
    environment (the system plugins plus --plugin-dir)."""

    def __init__(self, env):
        self.env, self.known = env, {}

    def has(self, name):
        if name not in self.known:
            # --exists alone also wants the plugin's version to be at least
            # GStreamer's own (1.x), which ours (0.x) is not
            r = subprocess.run(['gst-inspect-1.0', '--exists', '--atleast-version=0.0.0',
                                name], env=self.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.known[name] = r.returncode == 0
        return self.known[name]


def have_gpu():
    try:
        return subprocess.run(['nvidia-smi', '-L'], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


# Elements that are registered without their hardware: for these, ask for
# the hardware instead of the registry.
PROBES = {
    'zckernel': have_gpu,
    # gst-plugins-good registers v4l2src on any Linux; its default device
    'v4l2src': lambda: os.path.exists('/dev/video0'),
}


def run(command, cwd, env):
    """Run through sh (the docs quote caps for the shell); return an error
    string, or None if the pipeline ran cleanly."""
    # a process group of its own, so that a timeout ends gst-launch and not just sh
    p = subprocess.Popen(['sh', '-c', command], cwd=cwd, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, start_new_session=True)
    try:
        out, err = p.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return 'timed out after %d s' % TIMEOUT_S, err
    if p.returncode != 0:
        return 'exit status %d' % p.returncode, err
    if any('ERROR' in line for line in err.splitlines()):
        return 'ERROR on stderr', err
    return None, err


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--source-root', required=True)
    ap.add_argument('--plugin-dir', required=True)
    ap.add_argument('--list', action='store_true',
                    help='print the rewritten pipelines without running them')
    ap.add_argument('files', nargs='*')
    opts = ap.parse_args()
    root = os.path.abspath(opts.source_root)
    files = opts.files or [os.path.join(root, 'README.md')] + \
        sorted(glob.glob(os.path.join(root, 'docs', '*.md')))

    pipelines = []
    for path in files:
        shown = os.path.relpath(path, root)
        if shown.startswith('..'):
            shown = path
        for line, args, skip in extract(path):
            command, names = rewrite(args, root)
            pipelines.append(('%s:%d' % (shown, line), command, names, skip))

    if opts.list:
        for where, command, _, skip in pipelines:
            print('%s: %s%s' % (where, command, '  [skip: %s]' % skip if skip else ''))
        return 0

    tmp = tempfile.mkdtemp(prefix='zc-doc-pipelines-')
    plugin_dir = os.path.abspath(opts.plugin_dir)
    env = dict(os.environ)
    env.update(GST_PLUGIN_PATH_1_0=plugin_dir, GST_PLUGIN_PATH=plugin_dir,
               GST_REGISTRY_1_0=os.path.join(tmp, 'registry.bin'))
    registry = Registry(env)
    probed = {}
    passed = failed = skipped = 0
    for n, (where, command, names, skip) in enumerate(pipelines):
        if skip:
            print('SKIP %s: %s' % (where, skip))
            skipped += 1
            continue
        # an unknown element outside the hardware list is a typo: fail
        unknown = [e for e in names if e not in HARDWARE and not registry.has(e)]
        if unknown:
            print('FAIL %s: %s\n    no such element: %s' % (where, command, ', '.join(unknown)))
            failed += 1
            continue
        missing = None
        for e in names:
            if e in PROBES:
                if e not in probed:
                    probed[e] = PROBES[e]()
                present = probed[e]
            else:
                present = e not in HARDWARE or registry.has(e)
            if not present:
                missing = e
                break
        if missing:
            print('SKIP %s: needs %s (%s)' % (where, missing, HARDWARE[missing]))
            skipped += 1
            continue
        cwd = os.path.join(tmp, 'run-%d' % n)
        os.mkdir(cwd)
        error, err = run(command, cwd, env)
        if error:
            print('FAIL %s: %s\n    %s' % (where, command, error))
            for l in err.strip().splitlines()[-15:]:
                print('    ' + l)
            failed += 1
        else:
            print('ok %s: %s' % (where, command))
            passed += 1
        sys.stdout.flush()

    print('%d passed, %d failed, %d skipped' % (passed, failed, skipped))
    if failed:
        print('(the runs\' working directories are kept in %s)' % tmp)
        return 1
    shutil.rmtree(tmp, ignore_errors=True)
    if not passed and not skipped:
        # the docs have pipelines: finding none means the extraction broke
        print('no gst-launch-1.0 pipeline found in the docs')
        return 1
    if not passed:
        return 77
    return 0


if __name__ == '__main__':
    sys.exit(main())
