"""Runs `t5studio` for the contract captures: bounded in time, its failures recorded against the
contract they were meant to produce (never a traceback)."""
import json
import os
import subprocess


class Cli:
    def __init__(self, binary, work, goldens):
        self.binary, self.work, self.g = binary, work, goldens
        # Two threads: the suite shares a busy machine, and thread counts are not part of any contract.
        self.env = dict(os.environ, OMP_NUM_THREADS="2", HF_HUB_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1",
                        HF_HUB_CACHE=os.path.join(work, "hf-cache"), HOME=os.path.join(work, "home"))

    def path(self, name):
        return os.path.join(self.work, name)

    def run(self, contract, args, ok_codes=(0,), timeout=120, env=None):
        """stdout of `t5studio ARGS`, or None (the contract is failed, naming the exit code and stderr)."""
        merged = {k: v for k, v in dict(self.env, **(env or {})).items() if v is not None}  # None: unset it
        try:
            r = subprocess.run([self.binary] + list(args), capture_output=True, text=True, timeout=timeout, env=merged)
        except subprocess.TimeoutExpired:
            self.g.fail(contract, "t5studio %s ran past %d s" % (" ".join(args[:2]), timeout))
            return None
        if r.returncode not in ok_codes:
            self.g.fail(contract, "t5studio %s exited %d: %s" % (" ".join(args[:2]), r.returncode, r.stderr.strip()[-400:]))
            return None
        return r.stdout

    def json(self, contract, args, **kw):
        """The one JSON document `t5studio ARGS` prints, or None."""
        out = self.run(contract, args, **kw)
        if out is None:
            return None
        try:
            return json.loads(out)
        except ValueError as e:
            self.g.fail(contract, "stdout is not one JSON document (%s): %r" % (e, out[:200]))
            return None

    def json_lines(self, contract, args, **kw):
        """The JSON lines `t5studio ARGS` prints (a list), or None."""
        out = self.run(contract, args, **kw)
        return None if out is None else self.parse_lines(contract, out)

    def parse_lines(self, contract, text):
        try:
            return [json.loads(l) for l in text.splitlines() if l.strip()]
        except ValueError as e:
            self.g.fail(contract, "a line is not JSON (%s)" % e)
            return None

    def shape(self, contract, value, **kw):
        if value is not None:
            self.g.shape(contract, value, **kw)
