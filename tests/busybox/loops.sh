# Loops with expr (a process per step) and shell arithmetic.
for i in 1 2 3 4 5; do
  printf '%s ' "$i"
done
echo
i=0
while [ "$i" -lt 10 ]; do
  i=$($BB expr "$i" + 1)
done
echo "while/expr: $i"
s=0
for n in $($BB seq 1 100); do
  s=$((s + n))
done
echo "sum 1..100: $s"
j=5
until [ "$j" -eq 0 ]; do
  j=$($BB expr "$j" - 1)
  [ "$j" -eq 3 ] && continue
  printf '%s ' "$j"
done
echo
for a in 1 2 3; do
  for b in 1 2 3; do
    [ "$b" -eq 3 ] && break
    printf '%s%s ' "$a" "$b"
  done
done
echo
$BB seq 1 5 | while read -r line; do
  echo "read: $line $($BB expr "$line" \* "$line")"
done
case $($BB expr 7 % 3) in
  1) echo "case: one" ;;
  *) echo "case: other" ;;
esac
$BB expr 10 / 3
$BB expr length hello
$BB expr 3 \> 2
$BB expr 1 = 2
echo "expr false status: $?"
