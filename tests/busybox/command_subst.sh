# Command substitution: output captured through a pipe from a child.
x=$(echo a | $BB tr a b)
echo "x=$x"
y=`echo backtick`
echo "y=$y"
# Nested substitutions.
z=$(echo $(echo inner | $BB tr i I) outer)
echo "z=$z"
# Trailing newlines are stripped.
n=$(printf 'line\n\n\n')
echo "n=[$n]"
# The status of a substitution-only command is the substitution's.
v=$($BB sh -c 'echo out; exit 4')
echo "v=$v status=$?"
# Large output (bigger than a pipe buffer).
count=$($BB seq 1 50000 | $BB wc -l)
echo "count=$count"
big=$($BB seq 1 20000)
echo "${#big}"
# Arithmetic on substituted values.
echo "sum=$(( $($BB seq 1 10 | $BB wc -l) + $($BB expr 2 \* 3) ))"
