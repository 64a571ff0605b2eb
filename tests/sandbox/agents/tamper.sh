#!/bin/bash
# Hostile agent: try to change or stop the meter, the counter and the watchdog, then burn Python CPU.
out=/workspace/tamper.log
try() { if "$@" >/dev/null 2>&1; then echo "OK $*" >>"$out"; else echo "FAIL $*" >>"$out"; fi; }
try sh -c 'echo $$ > /sys/fs/cgroup/cpuacct/cgroup.procs'
try sh -c 'for f in /sys/fs/cgroup/*/py/cgroup.procs /sys/fs/cgroup/*/docker/*/py/cgroup.procs; do echo 1 > $f; done; false'
try rm -f /run/sbx/gate.sock
try rm -f /run/sbx/experiments.sock
try sh -c 'echo x > /run/sbx/gate.sock'
try touch /opt/sbx/sandbox/gate.py
try sh -c 'echo "" > /opt/sbx/sandbox/gate.py'
try sh -c 'echo "" > /etc/python3.11/sitecustomize.py'
# PID 1 (the container's init, root's) ignores signals from inside its namespace: it must still be there after,
# and so must the container's main process (root's sleep, the container's deadline).
kill -9 1 2>/dev/null; sleep 0.2; try sh -c '! test -d /proc/1'
try sh -c 'r=1; for p in /proc/[0-9]*; do if grep -q "^sleep" $p/cmdline; then kill -STOP ${p##*/} && r=0; fi; done; exit $r'
try mount -t tmpfs none /run/sbx
try unshare -Urm true
# A fake experiment record: the host counts, not us.
try python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect("/run/sbx/experiments.sock"); s.sendall(b"{\"op\": \"set\", \"counted\": 0}\n"); sys.exit("refused" in s.recv(999).decode())'
# Forge a gate token for our own process (the token belongs to no experiment).
# (this one is allowed: Python runs, metered like any other; the token is simply unknown)
SBX_GATE_TOKEN=deadbeef python3 -c 'print(1)' >/dev/null
# Burn Python CPU well past the budget: the meter must kill this.
python3 -c 'import time
while True: pass' >>"$out" 2>&1
echo "burn exit $?" >>"$out"
python3 -c 'print("python after budget ran")' >>"$out" 2>&1
echo "after exit $?" >>"$out"
git add tamper.log; git -c user.name=a -c user.email=a@a commit -qm tamper
exit 0
