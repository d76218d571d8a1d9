# busybox ping opens a raw ICMP socket (socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)), which root
# may (it has CAP_NET_RAW), natively and in the sandbox: an echo to loopback and its reply,
# seen through the IPv4 header busybox reads the TTL from. Never times.
$BB ping -c1 -W2 127.0.0.1 >/dev/null; echo "ping -c1 127.0.0.1: $?"
$BB ping -c2 -i 0.2 -W2 -s 100 127.0.0.1 |
  $BB sed -nE 's/^108 bytes from 127\.0\.0\.1: seq=([0-9]+) ttl=64 time=.*/reply seq=\1 ttl=64/p'
$BB ping -q -c1 -W2 127.0.0.2 | $BB grep -E 'packets transmitted'
