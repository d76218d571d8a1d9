# Signal handlers (trap) in the shell and in children.
trap 'echo got TERM' TERM
kill -TERM $$
echo after
trap 'echo got USR1' USR1
kill -USR1 $$
kill -USR1 $$
echo "after two USR1"
trap - TERM USR1
# A trapped signal sent to a child shell.
$BB sh -c 'trap "echo child got HUP; exit 11" HUP; kill -HUP $$; echo not reached'
echo "child status: $?"
# Ignored signals stay ignored in children.
$BB sh -c 'trap "" INT; kill -INT $$; echo ignored INT'
# An EXIT trap runs when a child shell exits.
$BB sh -c 'trap "echo exit trap" EXIT; echo body; exit 2'
echo "exit trap status: $?"
# The trap runs after the foreground child finishes.
$BB sh -c 'trap "echo trapped" TERM; $BB sleep 0.2 & p=$!; kill -TERM $$; wait $p; echo done'
trap 'echo exit trap of the main shell' EXIT
