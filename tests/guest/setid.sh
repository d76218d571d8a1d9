#!/bin/sh
# A guest cannot plant a set-user-ID or set-group-ID file on the host through --workspace,
# and what it creates there belongs to whoever ran sentry-run.
#
#   setid.sh SENTRY_RUN PLATFORM USER
#
# USER is root or nobody (sentry-run then runs under setpriv; skipped with exit 77 if it
# cannot run unprivileged at all). The host puts a set-user-ID file of USER's in the
# workspace. The guest copies /bin/cat there (cp, cat), chowns copies to 0:0 (fails, as it
# should, for nobody) and chmods them 4755, 2755 and 6755 (chmod and perl's fchmod), creates
# files with mode 06755 through open(O_CREAT), mkfifo and install, makes a directory and
# chmods it 6755, appends to the host's set-user-ID file, and (as root) creates a file as
# guest uid 1234 and chowns one to 1234:1234. On the host afterwards: no file but a directory
# has S_ISUID or S_ISGID, no directory has S_ISUID, no file has a file capability, everything
# the guest made belongs to USER, and the chmods still reached the host (mode 0755). The
# guest must also see the copy's full size right after cp.
# Exits 0 iff everything held.
set -u

if [ $# -ne 3 ]; then
  echo "usage: $0 SENTRY_RUN PLATFORM USER" >&2
  exit 2
fi
. "$(dirname "$0")/unpriv.sh"
platform=$2
run_base=
trap '[ -z "$run_base" ] || rm -rf "$run_base"' EXIT
trap 'exit 1' HUP INT TERM
as_user "$3" "$1"

ws=$run_base/ws
mkdir "$ws" && echo host-suid >"$ws/host_suid" && chmod 4755 "$ws/host_suid" &&
  chown -R "$run_uid:$run_gid" "$ws" || exit 2
out=$run_base/out

script='
umask 022
cp /bin/cat c_uid && chown 0:0 c_uid; chmod 4755 c_uid
[ "$(stat -c %s c_uid)" = "$(stat -c %s /bin/cat)" ] || echo "stale size after cp"
cat /bin/cat >c_gid && chown 0:0 c_gid; chmod 2755 c_gid
cat /bin/cat >c_both && chmod 6755 c_both
cat /bin/cat >c_fchmod && perl -e "open(F, q(<), q(c_fchmod)) or die; chmod(06755, *F) or die qq(fchmod: \$!)"
perl -e "umask 0; sysopen(F, q(o_creat), 0101, 06755) or die qq(open: \$!)"
perl -e "use POSIX; umask 0; POSIX::mkfifo(q(fifo), 06755) or die qq(mkfifo: \$!)"
install -m 6755 /bin/cat c_install
mkdir d && chmod 6755 d && cat /bin/cat >d/in_dir && chmod 4755 d/in_dir
echo guest >>host_suid
if [ "$(id -u)" = 0 ]; then
  mkdir -m 777 open
  perl -e "\$( = \$) = 1234; \$< = \$> = 1234; open(F, q(>), q(open/as_1234)) or die qq(\$!)"
  cat /bin/cat >c_chown && chown 1234:1234 c_chown && chmod 4755 c_chown
fi
ls -ln
echo guest-done
'
$run "$sentry_run" --platform="$platform" --workspace "$ws" -- /bin/sh -c "$script" \
  </dev/null >"$out" 2>&1
status=$?

fail=0
check() {
  if ! eval "$1"; then
    echo "FAIL: $2"
    fail=1
  fi
}
check '[ "$status" -eq 0 ] && grep -qx guest-done "$out"' "guest exit status $status"
check '! grep -q "stale size" "$out"' "the guest saw a stale size after cp"
expected="c_uid c_gid c_both c_fchmod o_creat fifo c_install d d/in_dir host_suid"
[ "$user" = root ] && expected="$expected open/as_1234 c_chown"
for f in $expected; do
  check '[ -e "$ws/$f" ]' "the guest did not make $f"
done
setid=$(find "$ws" ! -type d -perm /6000)
check '[ -z "$setid" ]' "set-ID files on the host: $(echo $setid)"
setuid_dirs=$(find "$ws" -type d -perm /4000)
check '[ -z "$setuid_dirs" ]' "set-user-ID directories on the host: $(echo $setuid_dirs)"
foreign=$(find "$ws" ! -user "$run_uid" -o ! -group "$run_gid")
check '[ -z "$foreign" ]' "files not owned by $run_uid:$run_gid: $(echo $foreign)"
for f in c_uid c_gid c_both c_fchmod; do
  check '[ "$(stat -c %a "$ws/$f")" = 755 ]' "$f: host mode $(stat -c %a "$ws/$f"), not 755"
done
check '[ "$(tail -n 1 "$ws/host_suid")" = guest ]' "the guest's append to host_suid is missing"
if command -v getcap >/dev/null; then
  caps=$(getcap -r "$ws" 2>/dev/null)
  check '[ -z "$caps" ]' "file capabilities on the host: $caps"
fi
if [ "$fail" -ne 0 ]; then
  echo "--- guest output:"
  cat "$out"
  ls -lnR "$ws"
fi
[ "$fail" -eq 0 ] && echo "setid.sh ($platform, $user): PASS"
exit "$fail"
