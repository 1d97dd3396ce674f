#!/usr/bin/env python3
"""io_bench.py — gpuprim_mpi's file input and output against what the machine gives (P-process
dd, h5py reads, pwrite) and against the short scripts users would write instead (h5py + numpy,
h5py + torch, h5py + cupy), all on one file in one run; each gpuprim_mpi run and each peer also
as a whole process (its wall time beside its phases: start-up, imports and exit included).
bench/README.md ("io_bench") explains every row.

The driver needs only the Python standard library. Everything that needs h5py, numpy, torch or
cupy runs in worker processes of this same file (`--worker SPEC`) under `--python`.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

SELF = os.path.abspath(__file__)
ITEMSIZE = {'f32': 4, 'f64': 8, 'i32': 4, 'i64': 8, 'u32': 4, 'u64': 8}
GROUPS = ('dd', 'h5py', 'pwrite', 'gpuprim', 'numpy', 'torch', 'cupy', 'gzip', 'validate')
ALIASES = {'limits': ('dd', 'h5py', 'pwrite'), 'peers': ('numpy', 'torch', 'cupy')}
GPU_PEERS = ('torch', 'cupy')
PWRITE_PIECE = 1 << 30          # below Linux's 2 GiB - 4 KiB limit of one write call


# ============================== worker side (runs under --python) ==============================

def _ready():
    """Tells the driver that this worker is set up, waits for its 'go' line; returns the start."""
    sys.stdout.write('ready\n')
    sys.stdout.flush()
    sys.stdin.readline()
    return time.monotonic()


def _answer(**kw):
    sys.stdout.write(json.dumps(kw) + '\n')
    sys.stdout.flush()


def w_info(spec):
    """The dataset's path, type, shape and layout (the one numeric dataset if none is named)."""
    import h5py
    with h5py.File(spec['file'], 'r') as f:
        name = spec.get('dataset')
        if not name:
            found = []
            f.visititems(lambda n, o: found.append('/' + n) if isinstance(o, h5py.Dataset)
                         and o.dtype.kind in 'iuf' and o.shape else None)
            if len(found) != 1:
                raise SystemExit('io_bench worker: %s: %d numeric datasets, choose one with '
                                 '--dataset: %s' % (spec['file'], len(found), ', '.join(found)))
            name = found[0]
        d = f[name]
        _answer(dataset=d.name, dtype=d.dtype.str, kind=d.dtype.kind, itemsize=d.dtype.itemsize,
                shape=list(d.shape), n=int(d.size), chunks=d.chunks, compression=d.compression,
                offset=d.id.get_offset())


def w_h5read(spec):
    """Reads rows [lo, hi) of the dataset into a fresh array with h5py's default (POSIX) driver."""
    import h5py
    t0 = _ready()
    with h5py.File(spec['file'], 'r') as f:
        a = f[spec['dataset']][spec['lo']:spec['hi']]
    t1 = time.monotonic()
    _answer(t0=t0, t1=t1, n=int(a.size))


def w_pwrite(spec):
    """Writes len bytes at off into the existing (preallocated) file with os.pwrite."""
    n, off = spec['len'], spec['off']
    buf = bytearray(n)                    # the bytes to write: the input file's, wrapped around
    mv = memoryview(buf)
    src = os.open(spec['src'], os.O_RDONLY)
    size, pos = os.fstat(src).st_size, 0
    while pos < n:
        pos += os.preadv(src, [mv[pos:pos + min(n - pos, PWRITE_PIECE)]], (off + pos) % size)
    os.close(src)
    t0 = _ready()
    fd = os.open(spec['out'], os.O_WRONLY)
    pos = 0
    while pos < n:
        pos += os.pwrite(fd, mv[pos:pos + min(n - pos, PWRITE_PIECE)], off + pos)
    os.close(fd)
    t1 = time.monotonic()
    _answer(t0=t0, t1=t1, n=n)


def _np_compute(np, a):
    """Statistics as gpuprim computes them (NaNs ignored and counted, float64 sums), np.sort."""
    nan = int(np.count_nonzero(np.isnan(a))) if a.dtype.kind == 'f' else 0
    b = a[~np.isnan(a)] if nan else a
    s = float(b.sum(dtype=np.float64))
    st = dict(count=int(a.size), nan_count=nan, sum=s, min=b.min().item(), max=b.max().item(),
              mean=s / b.size, l2_norm=float(np.einsum('i,i->', b, b, dtype=np.float64)) ** 0.5)
    return st, np.sort(a), {}


def _torch_compute(torch, a):
    """The same on the GPU: upload, torch statistics and torch.sort, download to a fresh array."""
    t = time.monotonic()
    x = torch.from_numpy(a).cuda()
    torch.cuda.synchronize()
    up = time.monotonic() - t
    isn = torch.isnan(x) if x.is_floating_point() else None
    nan = int(isn.sum().item()) if isn is not None else 0
    b = x[~isn] if nan else x
    s = b.sum(dtype=torch.float64)
    l2 = torch.linalg.vector_norm(b if b.is_floating_point() else b.double(), dtype=torch.float64)
    mn, mx = b.min(), b.max()
    srt = torch.sort(x).values
    torch.cuda.synchronize()
    t = time.monotonic()
    out = srt.cpu().numpy()
    down = time.monotonic() - t
    st = dict(count=int(a.size), nan_count=nan, sum=s.item(), min=mn.item(), max=mx.item(),
              mean=s.item() / b.numel(), l2_norm=l2.item())
    return st, out, dict(upload=up, download=down)


def _cupy_compute(cp, a):
    """The same with cupy on the GPU: upload, cupy statistics and cupy.sort, download."""
    t = time.monotonic()
    x = cp.asarray(a)
    cp.cuda.Device().synchronize()
    up = time.monotonic() - t
    isn = cp.isnan(x) if x.dtype.kind == 'f' else None
    nan = int(isn.sum().item()) if isn is not None else 0
    b = x[~isn] if nan else x
    s = cp.sum(b, dtype=cp.float64)
    l2 = cp.sqrt(cp.sum(cp.square(b.astype(cp.float64))))
    mn, mx = b.min(), b.max()
    srt = cp.sort(x)
    cp.cuda.Device().synchronize()
    t = time.monotonic()
    out = cp.asnumpy(srt)
    down = time.monotonic() - t
    st = dict(count=int(a.size), nan_count=nan, sum=s.item(), min=mn.item(), max=mx.item(),
              mean=s.item() / b.size, l2_norm=l2.item())
    return st, out, dict(upload=up, download=down)


def _peer_check(np, h5py, s, ref, dataset):
    """Whether the sorted array equals gpuprim's --out dataset (every element)."""
    with h5py.File(ref, 'r') as f:
        r = f[dataset][...]
    eq = r.shape == s.shape and np.array_equal(r, s, equal_nan=s.dtype.kind == 'f')
    return dict(equal=bool(eq), compared=int(s.size))


def w_peer(spec):
    """The peer script: h5py read, statistics, sort (numpy, or torch or cupy on the GPU), h5py
    write. imports: the time of its imports; init: of the GPU library's CUDA context."""
    t = time.monotonic()
    import h5py
    import numpy as np
    gpu, init = None, 0.0
    if spec['kind'] == 'torch':
        import torch as gpu
    elif spec['kind'] == 'cupy':
        import cupy as gpu
    imports = time.monotonic() - t
    t = time.monotonic()
    if spec['kind'] == 'torch':
        gpu.zeros(1, device='cuda')
        gpu.cuda.synchronize()
    elif spec['kind'] == 'cupy':
        gpu.zeros(1)
        gpu.cuda.Device().synchronize()
    init = time.monotonic() - t if gpu else 0.0
    _ready()
    t0 = time.monotonic()
    with h5py.File(spec['file'], 'r') as f:
        a = f[spec['dataset']][...]
    if not a.dtype.isnative:
        a = a.astype(a.dtype.newbyteorder('='))
    a = a.reshape(-1)
    t1 = time.monotonic()
    compute = {'numpy': lambda: _np_compute(np, a), 'torch': lambda: _torch_compute(gpu, a),
               'cupy': lambda: _cupy_compute(gpu, a)}[spec['kind']]
    st, srt, sub = compute()
    t2 = time.monotonic()
    with h5py.File(spec['out'], 'w') as g:
        g.create_dataset(spec['dataset'], data=srt)
    t3 = time.monotonic()
    check = _peer_check(np, h5py, srt, spec['ref'], spec['dataset']) if spec.get('ref') else None
    _answer(t0=t0, t1=t3, read=t1 - t0, compute=t2 - t1, write=t3 - t2, total=t3 - t0,
            imports=imports, init=init, stats=st, sub=sub, check=check)


def w_gzip(spec):
    """Writes the first n elements of the input as a chunked, gzip-compressed 1-D dataset: the
    chunks are compressed with zlib in threads (the deflate filter's own format and level) and
    stored with h5py's direct chunk write; two chunks are read back through the filter."""
    import h5py
    import numpy as np
    import zlib
    from concurrent.futures import ThreadPoolExecutor
    n, c, level = spec['n'], spec['chunk'], spec['level']
    with h5py.File(spec['file'], 'r') as f, h5py.File(spec['out'], 'w') as g:
        d = f[spec['dataset']]
        src = d if d.ndim == 1 else d[...].reshape(-1)
        c = min(c, n)
        o = g.create_dataset(spec['dataset'], shape=(n,), dtype=d.dtype, chunks=(c,),
                             compression='gzip', compression_opts=level)
        batch = c * 4 * spec['threads']
        stored = 0
        with ThreadPoolExecutor(spec['threads']) as ex:
            for lo in range(0, n, batch):
                x = np.zeros(min(batch, -(-(n - lo) // c) * c), dtype=d.dtype)
                x[:min(batch, n - lo)] = src[lo:min(lo + batch, n)]
                blobs = ex.map(lambda k, x=x: zlib.compress(x[k:k + c].tobytes(), level),
                               range(0, x.size, c))
                for k, blob in zip(range(0, x.size, c), blobs):
                    o.id.write_direct_chunk((lo + k,), blob)
                    stored += len(blob)
        for lo in (0, (n - 1) // c * c):
            if not np.array_equal(o[lo:min(lo + c, n)], src[lo:min(lo + c, n)],
                                  equal_nan=d.dtype.kind == 'f'):
                raise SystemExit('io_bench worker: %s: chunk at %d reads back wrong' %
                                 (spec['out'], lo))
    _answer(stored=stored, raw=n * d.dtype.itemsize)


WORKERS = {'info': w_info, 'h5read': w_h5read, 'pwrite': w_pwrite, 'peer': w_peer,
           'gzip': w_gzip}


# ================================== driver: processes ==================================

class BenchError(Exception):
    pass


def _kill(p):
    """Ends a process this script started, with its process group (mpirun and its ranks)."""
    if p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            p.kill()
    p.wait()


def _stop(procs, exc, name):
    """Ends the processes after exc; a time-out becomes a BenchError (that row fails)."""
    for p in procs:
        _kill(p)
    if isinstance(exc, subprocess.TimeoutExpired):
        raise BenchError('%s: stopped after --timeout %g s' % (name, exc.timeout)) from None


def _tail(text):
    """The line that says what went wrong: the last 'error:' line (mpirun adds its banner
    after the program's own line), else the last line."""
    lines = [ln.strip() for ln in (text or '').splitlines() if ln.strip(' -\n')]
    errs = [ln for ln in lines if 'error:' in ln.lower()]
    return (errs or lines or ['(no output)'])[-1]


def run_cmd(cmd, timeout, name=None):
    """Runs one command in a session of its own; returns (wall seconds, stdout, stderr)."""
    t = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except BaseException as e:
        _stop([p], e, name or os.path.basename(cmd[0]))
        raise
    wall = time.monotonic() - t
    if p.returncode != 0:
        raise BenchError('%s exited %d: %s' % (name or os.path.basename(cmd[0]), p.returncode,
                                              _tail(err)))
    return wall, out, err


def worker_cmd(ctx, spec):
    return [ctx.python, SELF, '--worker', json.dumps(spec)]


def run_workers(ctx, specs):
    """Starts one worker per spec; once all are ready, sends each its go line. Returns their
    answers and the span from the first worker's start to the last one's end."""
    procs = []
    try:
        for s in specs:
            procs.append(subprocess.Popen(worker_cmd(ctx, s), stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                          text=True, start_new_session=True))
        for p in procs:
            if p.stdout.readline().strip() != 'ready':
                raise BenchError('%s worker failed: %s' % (specs[0]['w'],
                                                           _tail(p.communicate()[1])))
        for p in procs:
            p.stdin.write('go\n')
            p.stdin.flush()
        outs = [p.communicate(timeout=ctx.args.timeout) for p in procs]
    except BaseException as e:
        _stop(procs, e, specs[0]['w'] + ' worker')
        raise
    answers = []
    for p, (out, err) in zip(procs, outs):
        if p.returncode != 0 or not out.strip():
            raise BenchError('%s worker exited %d: %s' % (specs[0]['w'], p.returncode,
                                                           _tail(err)))
        answers.append(json.loads(out.strip().splitlines()[-1]))
    span = max(a['t1'] for a in answers) - min(a['t0'] for a in answers)
    return answers, span, max(a['t1'] - a['t0'] for a in answers)


def one_answer(ctx, spec):
    _, out, _ = run_cmd(worker_cmd(ctx, spec), ctx.args.timeout, name=spec['w'] + ' worker')
    return json.loads(out.strip().splitlines()[-1])


def split(total, parts):
    """[lo, hi) ranges of sizes differing by at most one, the larger first (gpuprim's shards)."""
    q, r = divmod(total, parts)
    bounds = [i * q + min(i, r) for i in range(parts + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def rmf(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


# ============================== driver: rows and their lines ==============================

def fmt(v):
    if isinstance(v, bool):
        return 'yes' if v else 'no'
    if isinstance(v, float):
        return '%.5g' % v
    if v is None:
        return '-'
    return str(v).replace(' ', '_')


def emit(ctx, row):
    """Prints the row as one io_bench: key=value line (lists and dicts only in the JSON)."""
    ctx.rows.append(row)
    keys = [k for k in row if not isinstance(row[k], (dict, list))]
    print('io_bench: ' + ' '.join('%s=%s' % (k, fmt(row[k])) for k in keys), flush=True)


def fail(ctx, what, P, err):
    ctx.failures.append('%s P=%s: %s' % (what, P, err))
    emit(ctx, dict(what=what, P=P, check='FAIL', error=str(err)))


def note(msg):
    print('io_bench: ' + msg, file=sys.stderr, flush=True)


def find(ctx, what, P):
    for r in ctx.rows:
        if r.get('what') == what and r.get('P') == P and r.get('check') not in ('FAIL', 'skipped'):
            return r
    return None


def limit_row(what, P, nbytes, spans, procs):
    med = statistics.median(spans)
    return dict(what=what, P=P, bytes=nbytes, reps=len(spans), seconds=med, min=min(spans),
                GBps=nbytes / med / 1e9, proc_max=statistics.median(procs), samples=spans)


def timed_group(ctx, what, P, nbytes, once, reps):
    """reps runs of once() -> (span, slowest process); one row of median and min."""
    spans, procs = [], []
    try:
        for _ in range(reps):
            s, p = once()
            spans.append(s)
            procs.append(p)
    except BenchError as e:
        fail(ctx, what, P, e)
        return None
    row = limit_row(what, P, nbytes, spans, procs)
    emit(ctx, row)
    return row


# ================================== driver: the limits ==================================

def dd_once(ctx, P):
    """P dd processes, each copying its 1/P byte range of the file to /dev/null. Each starts
    as a shell that says 'ready' and waits for its go line before it becomes dd, so that the
    span (from the first go to the last exit) leaves process creation out, as for the other
    limits."""
    env = dict(os.environ, LC_ALL='C')
    procs = []
    try:
        for lo, hi in split(ctx.file_bytes, P):
            procs.append(subprocess.Popen(
                ['sh', '-c', 'echo ready; read go; exec dd "$@"', 'dd', 'if=' + ctx.file,
                 'of=/dev/null', 'bs=' + ctx.args.dd_bs, 'iflag=skip_bytes,count_bytes',
                 'skip=%d' % lo, 'count=%d' % (hi - lo)], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                start_new_session=True))
        for p in procs:
            p.stdout.readline()
        t = time.monotonic()
        for p in procs:
            p.stdin.write('go\n')
            p.stdin.flush()
        errs = [p.communicate(timeout=ctx.args.timeout)[1] for p in procs]
        span = time.monotonic() - t
    except BaseException as e:
        _stop(procs, e, 'dd')
        raise
    own = []
    for p, e in zip(procs, errs):
        m = re.search(r'copied, ([0-9.eE+-]+) s', e)
        if p.returncode != 0 or not m:
            raise BenchError('dd exited %d: %s' % (p.returncode, _tail(e)))
        own.append(float(m.group(1)))
    return span, max(own)


def h5read_once(ctx, P, path, info):
    specs = [dict(w='h5read', file=path, dataset=info['dataset'], lo=lo, hi=hi)
             for lo, hi in split(info['shape'][0], P)]
    answers, span, slowest = run_workers(ctx, specs)
    got = sum(a['n'] for a in answers)
    if got != info['n']:
        raise BenchError('the h5py readers got %d elements of %d' % (got, info['n']))
    return span, slowest


def fresh_file(path, nbytes):
    """A new file of nbytes, its blocks reserved (posix_fallocate; ftruncate where unsupported)."""
    rmf(path)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        try:
            os.posix_fallocate(fd, 0, nbytes)
        except OSError:
            os.ftruncate(fd, nbytes)
    finally:
        os.close(fd)


def pwrite_once(ctx, P):
    out = os.path.join(ctx.work, 'pwrite.bin')
    fresh_file(out, ctx.nbytes)
    specs = [dict(w='pwrite', src=ctx.file, out=out, off=lo, len=hi - lo)
             for lo, hi in split(ctx.nbytes, P)]
    try:
        _, span, slowest = run_workers(ctx, specs)
    finally:
        rmf(out)
    return span, slowest


def limits(ctx):
    a = ctx.args
    for P in a.nps:
        if 'dd' not in ctx.skip:
            timed_group(ctx, 'dd', P, ctx.file_bytes, lambda: dd_once(ctx, P), a.reps)
        if 'h5py' not in ctx.skip:
            timed_group(ctx, 'h5py_read', P, ctx.nbytes,
                        lambda: h5read_once(ctx, P, ctx.file, ctx.info), a.reps)
        if 'pwrite' not in ctx.skip:
            timed_group(ctx, 'pwrite', P, ctx.nbytes, lambda: pwrite_once(ctx, P), a.reps)


# ================================== driver: gpuprim ==================================

def gp_once(ctx, P, path, out):
    """One gpuprim_mpi run (--out, or --no-sort without it); returns its report, the phase
    times in seconds and the wall time of the whole mpirun."""
    jp = os.path.join(ctx.work, 'gpuprim.json')
    rmf(jp)
    cmd = ctx.mpirun + ['-np', str(P), ctx.gp_mpi, path, '--dataset', ctx.info['dataset'],
                        '--json', jp, '-q', '--no-progress']
    cmd += ['--out', out, '--force'] if out else ['--no-sort']
    if ctx.args.backend:
        cmd += ['--backend', ctx.args.backend]
    wall, _, _ = run_cmd(cmd, ctx.args.timeout, name='gpuprim_mpi at P=%d' % P)
    with open(jp) as f:
        rep = json.load(f)
    # report version 2: non-finite numbers are null, named in non_finite with their text
    rep.update({k: float(v) for k, v in rep.get('non_finite', {}).items()})
    rmf(jp)
    if out and rep.get('sorted_verified') is not True:
        raise BenchError('gpuprim_mpi at P=%d: the sort was not verified' % P)
    return rep, {k: v / 1e3 for k, v in rep['times_ms'].items()}, wall


def gp_phases(t, wall):
    """read = the read phase and the upload (data in); write; compute = the rest of total;
    startup and teardown (the report's rows outside the job; None from a gpuprim_mpi without
    them); outside = the whole mpirun's wall time less total."""
    read = sum(v for k, v in t.items() if k.startswith('read') or k == 'upload')
    write = sum(v for k, v in t.items() if k.startswith('write'))
    return dict(read=read, compute=t['total'] - read - write, write=write, total=t['total'],
                wall=wall, outside=wall - t['total'], startup=t.get('startup'),
                teardown=t.get('teardown'))


def gp_row(what, P, nbytes, samples, rep, sort):
    per = [gp_phases(t, w) for t, w in samples]
    row = dict(what=what, P=P, bytes=nbytes, reps=len(per), backend=rep.get('backend'))
    for k in ('read', 'compute') + (('write',) if sort else ()) + ('total', 'wall', 'outside',
                                                                   'startup', 'teardown'):
        vals = [p[k] for p in per if p[k] is not None]
        if vals:
            row[k], row[k + '_min'] = statistics.median(vals), min(vals)
    row['GBps'] = nbytes / row['read'] / 1e9 if row['read'] > 0 else None
    row['check'] = 'ok'
    row['phases'] = {k: statistics.median([t[k] for t, _ in samples]) for k in samples[0][0]}
    row['samples'] = per
    return row


def gpuprim_runs(ctx, what, P, path, n, sort):
    """Runs at P (each checked: n elements, and a verified sort); the first run with --out
    is kept as the reference for the peers."""
    samples, rep = [], None
    out = os.path.join(ctx.work, 'gpuprim_out.h5') if sort else None
    try:
        for _ in range(ctx.args.reps if sort else ctx.args.gzip_reps):
            rep, t, wall = gp_once(ctx, P, path, out)
            if rep['count'] != n:
                raise BenchError('gpuprim_mpi at P=%d counted %d elements, not %d' %
                                 (P, rep['count'], n))
            if sort and ctx.ref is None and 'validate' not in ctx.skip:
                ctx.ref = os.path.join(ctx.work, 'gpuprim_sorted.h5')
                os.replace(out, ctx.ref)
                ctx.gp_report = rep
            elif out:
                rmf(out)
            samples.append((t, wall))
    except BenchError as e:
        fail(ctx, what, P, e)
        return None, None
    ctx.backend = rep.get('backend')
    nbytes = rep['count'] * ctx.info['itemsize']
    row = gp_row(what, P, nbytes, samples, rep, sort)
    emit(ctx, row)
    return row, rep


def gpuprim_group(ctx):
    for P in ctx.args.nps:
        gpuprim_runs(ctx, 'gpuprim', P, ctx.file, ctx.info['n'], True)


# =================================== driver: the peers ===================================

def gpu_peer_missing(ctx, kind):
    """Why the h5py + torch (or + cupy) peer cannot run here, or None."""
    if kind == 'torch' and ctx.info['kind'] == 'u':
        return 'torch_sorts_no_unsigned_types'
    code = {'torch': 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)',
            'cupy': 'import sys, cupy; sys.exit(0 if cupy.cuda.runtime.getDeviceCount() > 0 '
                    'else 3)'}[kind]
    r = subprocess.run([ctx.python, '-c', code], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    if r.returncode == 3:
        return 'no_CUDA_GPU_visible_to_' + kind
    return None if r.returncode == 0 else 'no_%s_in_%s' % (kind, ctx.python)


def _same(a, b):
    a, b = float(a), float(b)
    return a == b or (a != a and b != b)


def stats_check(peer, rep):
    """Differences between the peer's statistics and gpuprim's report: counts, min and max
    exactly; sum, mean and L2 norm to 1e-9 relative (plus a floor for a sum near 0)."""
    bad = [k for k in ('count', 'nan_count') if peer[k] != rep[k]]
    bad += [k for k in ('min', 'max') if not _same(peer[k], rep[k])]
    big = max(abs(float(peer['min'])), abs(float(peer['max'])))
    for k in ('sum', 'mean', 'l2_norm'):
        a, b = float(peer[k]), float(rep[k])
        floor = 1e-15 * big * (peer['count'] if k == 'sum' else 1)
        if not (_same(a, b) or abs(a - b) <= 1e-9 * max(abs(a), abs(b)) + floor):
            bad.append('%s %.17g vs %.17g' % (k, a, b))
    return bad


def peer_check(ctx, ans):
    """'ok', 'unvalidated' or 'FAIL ...' for the first run of a peer."""
    if ans.get('check') is None:
        return 'unvalidated'
    bad = [] if ans['check']['equal'] else ['sorted output differs from gpuprim --out']
    bad += stats_check(ans['stats'], ctx.gp_report)
    return 'ok' if not bad else 'FAIL: ' + '; '.join(bad)


def peer_group(ctx, kind):
    what = 'peer_' + kind
    why = gpu_peer_missing(ctx, kind) if kind in GPU_PEERS else None
    if why:
        emit(ctx, dict(what=what, P=1, check='skipped', reason=why))
        return
    per, check = [], None
    out = os.path.join(ctx.work, 'peer_out.h5')
    try:
        for _ in range(ctx.args.peer_reps):
            spec = dict(w='peer', kind=kind, file=ctx.file, dataset=ctx.info['dataset'], out=out,
                        ref=ctx.ref if check is None else None)
            t = time.monotonic()
            (ans,), _, _ = run_workers(ctx, [spec])
            ans['wall'] = time.monotonic() - t
            ans['outside'] = ans['wall'] - ans['total']
            rmf(out)
            if check is None:
                check = peer_check(ctx, ans)
            per.append(ans)
    except BenchError as e:
        fail(ctx, what, 1, e)
        return
    row = dict(what=what, P=1, bytes=ctx.nbytes, reps=len(per))
    keys = ('read', 'compute', 'write', 'total', 'wall', 'outside', 'imports')
    keys += ('init',) if kind in GPU_PEERS else ()
    for k in keys:
        vals = [p[k] for p in per]
        row[k], row[k + '_min'] = statistics.median(vals), min(vals)
    for k in per[0]['sub']:
        row[k] = statistics.median([p['sub'][k] for p in per])
    row['check'] = check
    if check.startswith('FAIL'):
        ctx.failures.append('%s: %s' % (what, check))
    row['stats'] = per[0]['stats']
    row['samples'] = per
    emit(ctx, row)


# ============================ driver: gzip-compressed chunked input ============================

def gzip_group(ctx):
    a = ctx.args
    n = min(a.gzip_n, ctx.info['n'])
    path = os.path.join(ctx.work, 'gzip.h5')
    spec = dict(w='gzip', file=ctx.file, dataset=ctx.info['dataset'], n=n, out=path,
                chunk=a.gzip_chunk, level=a.gzip_level, threads=ctx.cores)
    try:
        t = time.monotonic()
        ans = one_answer(ctx, spec)
        made = time.monotonic() - t
    except BenchError as e:
        fail(ctx, 'gzip_file', None, e)
        return
    emit(ctx, dict(what='gzip_file', n=n, bytes=ans['raw'], stored=ans['stored'],
                   stored_ratio=ans['stored'] / ans['raw'], chunk=min(a.gzip_chunk, n),
                   level=a.gzip_level, seconds=made))
    os.sync()
    warm(path)
    ginfo = dict(ctx.info, n=n, shape=[n])
    nps = sorted(set([1] + a.gzip_nps))
    try:
        for P in nps:
            timed_group(ctx, 'gzip_h5py_read', P, ans['raw'],
                        lambda: h5read_once(ctx, P, path, ginfo), a.gzip_reps)
        for P in a.gzip_nps if 'gpuprim' not in ctx.skip else ():
            gpuprim_runs(ctx, 'gzip_gpuprim_read', P, path, n, False)
    finally:
        rmf(path)


# ================================ driver: ratios and targets ================================

MEANING = {
    'read_vs_h5py': 'gpuprim read+upload time / P-process h5py read time (<1: gpuprim faster)',
    'read_vs_dd': 'gpuprim read+upload time / P-process dd time',
    'write_vs_pwrite': 'gpuprim write time / P-process pwrite time',
    'job_vs_numpy': 'h5py+numpy total / gpuprim total: times faster',
    'job_vs_torch': 'h5py+torch total / gpuprim total: times faster',
    'job_vs_cupy': 'h5py+cupy total / gpuprim total: times faster',
    'wall_vs_numpy': 'h5py+numpy process wall / gpuprim mpirun wall: times faster',
    'wall_vs_torch': 'h5py+torch process wall / gpuprim mpirun wall: times faster',
    'wall_vs_cupy': 'h5py+cupy process wall / gpuprim mpirun wall: times faster',
    'read_s': 'gpuprim read+upload, seconds',
    'write_s': 'gpuprim write, seconds',
    'total_s': 'gpuprim total, seconds',
    'gzip_h5py_scaling': 'P-process h5py gzip read rate / (P x one-process rate)',
    'gzip_read_scaling': 'gpuprim --no-sort read rate / (P x one-process h5py rate)',
}


def target(ctx, name, P):
    """The issue's target for this ratio at P on this machine: (op, value) or None. The
    general ones hold everywhere; the absolute ones only for the machines the issue names:
    the H200 host (CUDA backend, 2^30 float32) and a machine without a GPU (CPU backend,
    2^28 float32)."""
    gpu = ctx.backend == 'cuda'
    general = {'read_vs_h5py': ('<=', 1.25), 'write_vs_pwrite': ('<=', 1.5)}
    if gpu:
        general['read_vs_dd'] = ('<=', 2.0)
    if name == 'gzip_read_scaling':
        return ('>=', 0.8) if P <= ctx.cores else None
    if name in general:
        return general[name]
    f32 = ctx.info['kind'] == 'f' and ctx.info['itemsize'] == 4
    h200 = gpu and f32 and ctx.nbytes == 4 << 30 and any('H200' in g for g in ctx.gpus)
    cpu = not gpu and f32 and ctx.nbytes == 1 << 30
    if h200:
        return {('read_s', 4): ('<=', 0.45), ('read_s', 1): ('<=', 1.2),
                ('total_s', 4): ('<=', 1.8), ('total_s', 1): ('<=', 2.5),
                ('job_vs_torch', 4): ('>=', 3.5), ('job_vs_numpy', 4): ('>=', 10.0)}.get((name, P))
    if cpu:
        return {('read_s', 2): ('<=', 0.08), ('write_s', 2): ('<=', 0.19),
                ('job_vs_numpy', 2): ('>=', 1.5)}.get((name, P))
    return None


def add_ratio(ctx, name, P, value):
    row = dict(what='ratio', name=name, P=P, value=value)
    t = target(ctx, name, P)
    if t:
        row['target'] = t[0] + fmt(t[1])
        row['pass'] = value <= t[1] if t[0] == '<=' else value >= t[1]
    emit(ctx, row)


def ratios(ctx):
    for P in ctx.args.nps:
        g = find(ctx, 'gpuprim', P)
        if not g:
            continue
        pairs = [('read_vs_h5py', 'h5py_read', lambda o: g['read'] / o['seconds']),
                 ('read_vs_dd', 'dd', lambda o: g['read'] / o['seconds']),
                 ('write_vs_pwrite', 'pwrite', lambda o: g['write'] / o['seconds']),
                 ('job_vs_numpy', 'peer_numpy', lambda o: o['total'] / g['total']),
                 ('job_vs_torch', 'peer_torch', lambda o: o['total'] / g['total']),
                 ('job_vs_cupy', 'peer_cupy', lambda o: o['total'] / g['total']),
                 ('wall_vs_numpy', 'peer_numpy', lambda o: o['wall'] / g['wall']),
                 ('wall_vs_torch', 'peer_torch', lambda o: o['wall'] / g['wall']),
                 ('wall_vs_cupy', 'peer_cupy', lambda o: o['wall'] / g['wall'])]
        for name, other, f in pairs:
            o = find(ctx, other, 1 if other.startswith('peer') else P)
            if o:
                add_ratio(ctx, name, P, f(o))
        for name, key in (('read_s', 'read'), ('write_s', 'write'), ('total_s', 'total')):
            if target(ctx, name, P):
                add_ratio(ctx, name, P, g[key])
    one = find(ctx, 'gzip_h5py_read', 1)
    for P in ctx.args.gzip_nps if one else ():
        for name, what in (('gzip_h5py_scaling', 'gzip_h5py_read'),
                           ('gzip_read_scaling', 'gzip_gpuprim_read')):
            r = find(ctx, what, P)
            if r and (P > 1 or what != 'gzip_h5py_read'):
                add_ratio(ctx, name, P, r['GBps'] / (P * one['GBps']))


# ================================== driver: the table ==================================

LABELS = [('dd', 'dd of 1/P of the file, P processes'),
          ('h5py_read', 'h5py read of 1/P, P processes'),
          ('pwrite', 'pwrite of 1/P, P processes'),
          ('gpuprim', 'gpuprim_mpi --out'),
          ('peer_numpy', 'peer: h5py + numpy'),
          ('peer_torch', 'peer: h5py + torch (GPU)'),
          ('peer_cupy', 'peer: h5py + cupy (GPU)'),
          ('gzip_h5py_read', 'gzip input: h5py read, P procs'),
          ('gzip_gpuprim_read', 'gzip input: gpuprim --no-sort')]


def cell(v):
    return '%9s' % ('-' if v is None else '%.4g' % v)


def table(ctx):
    print('\nio_bench: median of the repetitions, seconds (GB/s: the bytes read or written '
          '/ that time; wall: the whole process, outside = wall - total)')
    print('%-34s %3s %9s %9s %9s %9s %9s %9s %9s  %s' % ('row', 'P', 'read', 'compute', 'write',
                                                        'total', 'wall', 'outside', 'GB/s',
                                                        'check'))
    for what, label in LABELS:
        for r in (r for r in ctx.rows if r.get('what') == what):
            if what in ('dd', 'h5py_read', 'gzip_h5py_read'):
                c = [r.get('seconds'), None, None, None, None, None]
            elif what == 'pwrite':
                c = [None, None, r.get('seconds'), None, None, None]
            else:
                c = [r.get(k) for k in ('read', 'compute', 'write', 'total', 'wall', 'outside')]
            chk = r.get('check', '') + (' ' + r['reason'] if r.get('reason') else '')
            print('%-34s %3s %s %s  %s' % (label, r.get('P', ''), ' '.join(cell(v) for v in c),
                                           cell(r.get('GBps')), chk or ''))
    rows = [r for r in ctx.rows if r.get('what') == 'ratio']
    if rows:
        print('\n%-18s %3s %9s %8s %4s  %s' % ('ratio', 'P', 'value', 'target', 'pass',
                                              'meaning'))
    for r in rows:
        print('%-18s %3d %9.3g %8s %4s  %s' % (r['name'], r['P'], r['value'],
                                               r.get('target', '-'), fmt(r.get('pass')),
                                               MEANING[r['name']]))


# ================================ driver: machine and input ================================

def _first(cmd):
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                           timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return ''
    return r.stdout.strip() if r.returncode == 0 else ''


def machine(ctx):
    """The machine, the build and the software, as rows (and ctx.gpus)."""
    mem = cpu = ''
    with open('/proc/meminfo') as f:
        mem = next((ln.split()[1] for ln in f if ln.startswith('MemTotal:')), '0')
    with open('/proc/cpuinfo') as f:
        cpu = next((ln.split(':', 1)[1].strip() for ln in f if ln.startswith('model name')), '')
    smi = _first(['nvidia-smi', '--query-gpu=name', '--format=csv,noheader'])
    ctx.gpus = [g.strip() for g in smi.splitlines() if g.strip()]
    emit(ctx, dict(what='machine', host=socket.gethostname(), nproc=ctx.cores,
                   mem_GiB=round(int(mem) / 2**20, 1), cpu=cpu, kernel=os.uname().release,
                   gpus=len(ctx.gpus), gpu=ctx.gpus[0] if ctx.gpus else 'none',
                   work_fs=_first(['stat', '-f', '-c', '%T', ctx.work])))
    ver = _first(ctx.mpirun + ['-np', '1', ctx.gp_mpi, '--version']).splitlines()
    emit(ctx, dict(what='build', version=(ver[0].split()[-1] if ver else 'unknown'),
                   cuda_backend=next((v.split(':')[1].strip() for v in ver
                                      if v.startswith('CUDA backend')), '?'),
                   bin=os.path.dirname(ctx.gp_mpi)))
    code = ('import h5py, numpy\ndef v(m):\n try:\n  return __import__(m).__version__\n'
            ' except Exception:\n  return "none"\n'
            'print(h5py.__version__, numpy.__version__, v("torch"), v("cupy"))')
    v = (_first([ctx.python, '-c', code]) or '? ? ? ?').split()
    emit(ctx, dict(what='run', date=time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime()),
                   python=ctx.python, h5py=v[0], numpy=v[1], torch=v[2], cupy=v[3],
                   mpirun=' '.join(ctx.mpirun), backend=ctx.args.backend or 'auto',
                   load=os.getloadavg()[0], work=ctx.work))


def warm(path):
    """Reads the file once, so that every timed run finds it in the page cache."""
    buf = bytearray(16 << 20)
    with open(path, 'rb', buffering=0) as f:
        while f.readinto(buf):
            pass


def make_input(ctx):
    a = ctx.args
    if a.input:
        ctx.file = os.path.abspath(a.input)
        return
    ctx.file = os.path.join(ctx.work, 'input.h5')
    ctx.made.append(ctx.file)
    gen = ctx.mpirun + ['-np', str(min(ctx.cores, 8)), ctx.gp_gen, ctx.file, '--n', str(a.n),
                        '--dtype', a.dtype, '--force']
    t, _, _ = run_cmd(gen, a.timeout, name='gpuprim_gen')
    emit(ctx, dict(what='generate', n=a.n, dtype=a.dtype, seconds=t))


def setup(ctx):
    a = ctx.args
    need = (3 if a.input is None else 2) * a.n * ITEMSIZE[a.dtype]
    if a.input:
        need = 2 * os.path.getsize(a.input)
    free = shutil.disk_usage(ctx.work).free
    if free < need:
        raise BenchError('%s: %.1f GiB free, the run needs about %.1f GiB (3x the file)' %
                         (ctx.work, free / 2**30, need / 2**30))
    machine(ctx)
    make_input(ctx)
    os.sync()
    ctx.info = one_answer(ctx, dict(w='info', file=ctx.file, dataset=a.dataset))
    ctx.nbytes = ctx.info['n'] * ctx.info['itemsize']
    ctx.file_bytes = os.path.getsize(ctx.file)
    if ctx.info['n'] < max(a.nps + a.gzip_nps):
        raise BenchError('%s: %d elements, fewer than the largest P' % (ctx.file, ctx.info['n']))
    t = time.monotonic()
    warm(ctx.file)
    i = ctx.info
    emit(ctx, dict(what='input', file=ctx.file, dataset=i['dataset'], dtype=i['dtype'],
                   shape='x'.join(map(str, i['shape'])), n=i['n'], bytes=ctx.nbytes,
                   file_bytes=ctx.file_bytes, chunks=bool(i['chunks']),
                   compression=i['compression'], warm_seconds=time.monotonic() - t))


# ==================================== driver: main ====================================

def count(text):
    """123, 1e6 or 2^28."""
    t = text.strip()
    if '^' in t:
        b, e = t.split('^')
        return int(b) ** int(e)
    return int(float(t)) if 'e' in t.lower() else int(t)


def plist(text):
    v = [count(x) for x in text.split(',') if x.strip()]
    if not v or min(v) < 1:
        raise argparse.ArgumentTypeError('need a comma-separated list of counts >= 1')
    return v


def parse_args(argv):
    repo = os.path.dirname(os.path.dirname(SELF))
    cores = len(os.sched_getaffinity(0))
    gz = sorted(set([1 << k for k in range(cores.bit_length()) if 1 << k <= cores] + [cores]))
    p = argparse.ArgumentParser(description='gpuprim_mpi I/O against the limits (dd, h5py, '
                                'pwrite) and the peers (h5py + numpy / torch / cupy); '
                                'bench/README.md')
    p.add_argument('--bin', default=os.path.join(repo, 'build'),
                   help='folder of gpuprim_mpi and gpuprim_gen (default: REPO/build)')
    p.add_argument('--mpirun', default='sh ' + os.path.join(repo, 'tests', 'mpirun.sh'),
                   help='MPI launcher command, split at blanks (default: tests/mpirun.sh)')
    p.add_argument('--work', help='folder for the files (default: a new temporary folder)')
    p.add_argument('--input', help='use this HDF5 file instead of generating one')
    p.add_argument('--dataset', help='dataset of --input (default: its one numeric dataset)')
    p.add_argument('--n', type=count, help='elements to generate (2^28)')
    p.add_argument('--dtype', choices=sorted(ITEMSIZE), default='f32')
    p.add_argument('--nps', type=plist, help='process counts (1,2,4)')
    p.add_argument('--reps', type=count, help='repetitions of each row (3)')
    p.add_argument('--peer-reps', type=count, default=1,
                   help='repetitions of the peers (1: they are slow)')
    p.add_argument('--python', help='python with h5py and numpy (torch, cupy optional) for the '
                   'peers and the workers (default: the first of $GPUPRIM_PYTHON, this one, '
                   '/usr/bin/python3, python3 that has h5py and numpy)')
    p.add_argument('--skip', default='', help='comma-separated groups to leave out: ' +
                   ', '.join(GROUPS + tuple(ALIASES)))
    p.add_argument('--backend', help='passed to gpuprim_mpi --backend (default: its auto)')
    p.add_argument('--dd-bs', default='64M', help="dd's block size (64M)")
    p.add_argument('--gzip-n', type=count, help='elements of the gzip input (2^28)')
    p.add_argument('--gzip-nps', type=plist,
                   help='process counts for the gzip rows (powers of 2 up to the cores, and '
                   'the cores: %s)' % ','.join(map(str, gz)))
    p.add_argument('--gzip-reps', type=count, default=1,
                   help='repetitions of the gzip rows (1: they are slow)')
    p.add_argument('--gzip-chunk', type=count, help='chunk elements (2^20)')
    p.add_argument('--gzip-level', type=int, default=4, help='gzip level (4)')
    p.add_argument('--timeout', type=float, default=1800, help='seconds per command (1800)')
    p.add_argument('--json', help='write every row to this file')
    p.add_argument('--smoke', action='store_true', help='n = 2^16, one repetition, P = 1,2, '
                   'gzip chunks of 5000 elements, where those options are not given (the '
                   'CTest run: the script works; its figures mean nothing)')
    p.add_argument('--worker', help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    small = dict(n=1 << 16, gzip_n=1 << 16, gzip_chunk=5000, reps=1, nps=[1, 2], gzip_nps=[1, 2])
    full = dict(n=1 << 28, gzip_n=1 << 28, gzip_chunk=1 << 20, reps=3, nps=[1, 2, 4], gzip_nps=gz)
    for k, v in (small if a.smoke else full).items():
        if getattr(a, k) is None:
            setattr(a, k, v)
    skip = set()
    for s in (x.strip() for x in a.skip.split(',') if x.strip()):
        if s not in GROUPS and s not in ALIASES:
            p.error('--skip: unknown group %s (groups: %s)' % (s, ', '.join(GROUPS)))
        skip.update(ALIASES.get(s, (s,)))
    a.skip_set = skip
    return a


class Ctx:
    """What the driver knows: the options, the input, the rows so far."""

    def __init__(self, args):
        self.args = args
        self.python = args.python
        self.mpirun = shlex.split(args.mpirun)
        self.gp_mpi = os.path.join(os.path.abspath(args.bin), 'gpuprim_mpi')
        self.gp_gen = os.path.join(os.path.abspath(args.bin), 'gpuprim_gen')
        self.cores = len(os.sched_getaffinity(0))
        self.skip = args.skip_set
        self.rows, self.failures, self.made, self.gpus = [], [], [], []
        self.ref = self.gp_report = self.backend = self.info = None
        self.work = self.file = None
        self.nbytes = self.file_bytes = 0


def run_groups(ctx):
    limits(ctx)
    if 'gpuprim' not in ctx.skip:
        gpuprim_group(ctx)
    for kind in ('numpy',) + GPU_PEERS:
        if kind not in ctx.skip:
            peer_group(ctx, kind)
    if ctx.ref:
        rmf(ctx.ref)
    if 'gzip' not in ctx.skip:
        gzip_group(ctx)
    ratios(ctx)


def write_json(ctx, path, status):
    doc = dict(tool='io_bench', command=[sys.argv[0]] + sys.argv[1:], status=status,
               options={k: v for k, v in vars(ctx.args).items() if k not in ('worker',
                                                                            'skip_set')},
               input=ctx.info, rows=ctx.rows, failures=ctx.failures)
    with open(path, 'w') as f:
        json.dump(doc, f, indent=1)
        f.write('\n')


def pick_python(given):
    """The python for the workers: --python if it has h5py and numpy, else None; without
    --python the first of $GPUPRIM_PYTHON, this one, /usr/bin/python3, python3 that has them."""
    cands = [given] if given else [os.environ.get('GPUPRIM_PYTHON'), sys.executable,
                                   '/usr/bin/python3', shutil.which('python3')]
    for py in (c for c in cands if c):
        try:
            if subprocess.run([py, '-c', 'import h5py, numpy'], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode == 0:
                return py
        except OSError:
            pass
    return None


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        spec = json.loads(args.worker)
        WORKERS[spec['w']](spec)
        return 0
    args.python = pick_python(args.python)
    if not args.python:
        print('io_bench: error: no python with h5py and numpy (--python; Debian/Ubuntu: '
              'apt-get install python3-h5py)', file=sys.stderr)
        return 2
    ctx = Ctx(args)
    for prog in (ctx.gp_mpi, ctx.gp_gen):
        if not os.access(prog, os.X_OK):
            print('io_bench: error: %s: not found or not executable (--bin)' % prog,
                  file=sys.stderr)
            return 2
    made_work = args.work is None
    ctx.work = tempfile.mkdtemp(prefix='io_bench.') if made_work else os.path.abspath(args.work)
    os.makedirs(ctx.work, exist_ok=True)
    status = 'ok'
    start = time.monotonic()
    try:
        setup(ctx)
        run_groups(ctx)
        emit(ctx, dict(what='end', seconds=time.monotonic() - start, load=os.getloadavg()[0]))
        table(ctx)
    except BenchError as e:
        print('io_bench: error: %s' % e, file=sys.stderr)
        ctx.failures.append(str(e))
        status = 'error'
    finally:
        for f in ctx.made + [os.path.join(ctx.work, n) for n in
                             ('gpuprim_sorted.h5', 'gpuprim_out.h5', 'peer_out.h5',
                              'pwrite.bin', 'gzip.h5', 'gpuprim.json')]:
            rmf(f)
        if made_work:
            shutil.rmtree(ctx.work, ignore_errors=True)
    if ctx.failures:
        print('io_bench: %d failure(s):\n  %s' % (len(ctx.failures),
                                                  '\n  '.join(ctx.failures)), file=sys.stderr)
        status = 'error' if status == 'error' else 'failed'
    if args.json:
        write_json(ctx, args.json, status)
    return 0 if status == 'ok' else 1


if __name__ == '__main__':
    sys.exit(main())
