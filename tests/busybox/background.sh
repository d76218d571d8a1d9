# Background jobs and wait; output order made deterministic with sort.
{
  for n in 1 2 3 4 5; do
    ( $BB sleep 0.2; echo "job $n" ) &
  done
  wait
  echo "wait status: $?"
} | $BB sort
{
  ( $BB sleep 0.2; echo x ) &
  ( $BB sleep 0.1; echo y ) &
  ( echo z ) &
  wait
} | $BB sort
# wait PID returns that job's status.
( $BB sleep 0.1; exit 3 ) &
p=$!
wait "$p"
echo "wait pid: $?"
# A job killed by a signal: 128+15.
$BB sleep 5 &
p=$!
kill -TERM "$p"
wait "$p"
echo "killed job: $?"
# Jobs writing into one pipe.
{
  for n in 1 2 3; do ( $BB seq "$n" 3 ) & done
  wait
} | $BB sort -n | $BB tr '\n' ' '
echo
# A well separated fast and slow job finish in order.
( $BB sleep 1; echo slow ) &
( $BB sleep 0.05; echo fast ) &
wait
