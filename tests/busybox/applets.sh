# Applets run as separate processes, each exec'ing $BB.
echo plain echo
echo -n "no newline"; echo
printf '%s-%d\n' str 42
$BB echo applet echo
$BB cat <<'END'
here-doc line 1
here-doc line 2
END
printf 'x\ny\n' | $BB cat - 
$BB cat /dev/null
echo "cat /dev/null: $?"
$BB head -c 16 /dev/zero | $BB wc -c
$BB head -c 1000 /dev/urandom | $BB wc -c
$BB cat /nonexistent/file 2>/dev/null
echo "cat missing: $?"
echo "Hello, World" | $BB tr 'A-Za-z' 'N-ZA-Mn-za-m'
echo "squeeze    these   spaces" | $BB tr -s ' '
printf 'b\na\nc\nb\n' | $BB sort
printf 'b\na\nc\nb\n' | $BB sort -u
printf '10\n9\n100\n' | $BB sort -n
printf '10\n9\n100\n' | $BB sort
printf 'k 3\nk 1\nk 2\n' | $BB sort -k2,2n
$BB seq 5
$BB seq 2 2 10 | $BB tr '\n' ' '; echo
$BB seq 3 -1 1
$BB seq 10 | $BB head -n 3
$BB seq 10 | $BB head -n -7
printf 'one two\nthree\n' | $BB wc
printf 'one two\nthree\n' | $BB wc -l
$BB expr 6 \* 7
$BB expr substr hello 2 3
$BB expr index hello l
$BB expr hello : 'h\(.*\)o'
$BB expr 5 - 10
$BB true
echo "true: $?"
$BB false
echo "false: $?"
$BB test 3 -gt 2
echo "test: $?"
$BB basename /a/b/c.txt .txt
$BB dirname /a/b/c.txt
