#!/bin/bash
# Hostile agent: compute that never passes the Python gate, started by a non-Python agent (as a Node or Rust
# CLI starts its tool calls): a bash subshell loop, awk, perl, a compiled binary, python -S. All of it must
# count toward the budget and be killed at it; after it Python is refused, a short command still runs
# (git commit, within the allowance) and a new loop dies once the allowance is spent.
out=/workspace/tools.log
( while :; do :; done ) & p1=$!
awk 'BEGIN { while (1) {} }' & p2=$!
perl -e '1 while 1' & p3=$!
sha256sum /dev/zero & p4=$!
python3 -S -c 'while True: pass' & p5=$!
for p in $p1 $p2 $p3 $p4 $p5; do wait $p; echo "loop exit $?" >> $out; done
python3 -c 'print("python after budget ran")' >> $out 2>&1; echo "python exit $?" >> $out
git add tools.log && git -c user.name=a -c user.email=a@a commit -qm tools; echo "commit exit $?" >> $out
awk 'BEGIN { while (1) {} }'; echo "late loop exit $?" >> $out
exit 0
