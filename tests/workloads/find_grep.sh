# Workload: a read-only walk of a real tree -- find over /usr/include (libc6-dev,
# linux-libc-dev), xargs batching argument lists, grep opening every header. The pipeline is
# the issue's, as written (no -print0: header names have no blanks). It writes nothing, so
# unlike the other scripts it needs no working directory in /tmp.
find /usr/include -name '*.h' | xargs grep -l define | wc -l
