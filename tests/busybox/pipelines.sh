# Pipelines: data through several processes, SIGPIPE on early exit, pipeline status.
$BB seq 1 1000 | $BB sort -rn | $BB head -5
echo hello world | $BB tr a-z A-Z
echo "one two three" | $BB wc -w
printf 'a\nb\nc\n' | $BB wc -l
# More than a pipe buffer (64 KiB) so the writer must block until the reader drains.
$BB seq 1 100000 | $BB wc -c
$BB seq 1 100000 | $BB tail -1
# The writer dies of SIGPIPE once head exits; the pipeline status is head's.
$BB yes abc | $BB head -3
echo "yes|head status: $?"
# Pipeline status is the last command's.
true | false
echo "true|false: $?"
false | true
echo "false|true: $?"
! false
echo "! false: $?"
# A long pipeline.
$BB seq 1 20 | $BB sort -r | $BB head -10 | $BB sort -n | $BB tr '\n' ' ' | $BB wc -c
echo abcabc | $BB tr -d b | $BB tr c z
