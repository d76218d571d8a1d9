# Exit status propagation through children, and from the guest to sentry-run.
$BB sh -c 'exit 7'
echo "sh -c exit 7: $?"
$BB sh -c 'exit 0'
echo "exit 0: $?"
$BB sh -c 'exit 255'
echo "exit 255: $?"
$BB sh -c 'exit 256'
echo "exit 256: $?"
$BB sh -c 'exit 300'
echo "exit 300: $?"
$BB sh -c '$BB sh -c "exit 12"'
echo "nested: $?"
$BB sh -c 'false'
echo "false: $?"
/nonexistent/command 2>/dev/null
echo "not found: $?"
nonexistent_command_xyz 2>/dev/null
echo "not found in PATH: $?"
/etc/passwd 2>/dev/null
echo "not executable: $?"
/ 2>/dev/null
echo "a directory: $?"
f() { return 4; }
f
echo "function: $?"
$BB sh -c 'set -e; false; echo not reached'
echo "set -e: $?"
# The last command is exec'd by sh, so its status is the guest's own.
$BB sh -c 'exit 7'
