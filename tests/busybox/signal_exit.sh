# Children dying of signals report 128+N, and that reaches sentry-run as an exit code.
#
# The top-level shell is PID 1 of its PID namespace inside the sandbox, and Linux
# drops signals with a default action that PID 1 sends itself (`kill -KILL $$`
# there does nothing), while natively the same shell would die. So every kill
# here targets a child shell, which is not PID 1 on either side, and the final
# status 137 leaves the guest through a normal exit(137). The guest's first
# process dying of a signal is tested by tests/guest (guest.die_by_signal).
$BB sh -c 'kill -KILL $$; echo not reached'
echo "KILL: $?"
$BB sh -c 'kill -TERM $$; echo not reached'
echo "TERM: $?"
$BB sh -c 'kill -INT $$; echo not reached'
echo "INT: $?"
$BB sh -c 'kill -USR1 $$; echo not reached'
echo "USR1: $?"
$BB sh -c 'kill -ALRM $$; echo not reached'
echo "ALRM: $?"
# Killed by its parent rather than by itself.
$BB sleep 5 &
p=$!
kill -KILL "$p"
wait "$p"
echo "killed by parent: $?"
# A subshell that dies of a signal (its last command is exec'd, so no extra fork).
( $BB sh -c 'kill -HUP $$' )
echo "HUP in subshell: $?"
$BB sh -c 'kill -KILL $$'
exit $?
