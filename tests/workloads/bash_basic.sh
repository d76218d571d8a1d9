# Workload: the smallest real session -- write a file in /tmp, read it back, list /tmp.
# The command line is the one from the issue, kept as written. `ls -la /tmp | wc -l` is
# deterministic only because compare.sh runs both halves in a private, fresh /tmp (see there):
# 4 lines, "total", ".", "..", "a". That is also why this one script does not use a
# `mktemp -d` working directory, and why it leaves /tmp/a behind: the sandboxed run must start
# from the /tmp the native run left.
set -e; cd /tmp; echo hi > a; cat a; ls -la /tmp | wc -l
