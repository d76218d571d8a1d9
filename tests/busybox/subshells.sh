# Subshells: separate processes with copies of the shell state.
( exit 3 ); echo "subshell exit: $?"
v=outer
( v=inner; echo "in subshell: $v" )
echo "after subshell: $v"
( cd /; pwd )
echo "cwd unchanged: $([ "$(pwd)" = "$PWD" ] && echo yes)"
{ echo group1; echo group2; } | $BB tr a-z A-Z
( echo a; echo b; echo c ) | $BB sort -r
# Nested subshells and their statuses.
( ( ( exit 5 ); echo "inner: $?"; exit 6 ); echo "middle: $?" )
# A subshell killed by a signal.
( $BB sh -c 'kill -TERM $$' ); echo "killed subshell: $?"
( $BB sh -c 'kill -TERM $$'; echo "in subshell after kill: $?" )
# exit inside a subshell does not end the outer shell.
( exit 0 ) && echo "still here"
# Functions run in the current shell unless put in a subshell.
f() { g=set_by_f; return 9; }
( f ); echo "f in subshell: $? g=${g:-unset}"
f; echo "f in shell: $? g=${g:-unset}"
