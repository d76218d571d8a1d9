// The Sentry's DNS answers under --net=host: a query the guest sends to port 53 anywhere
// (over UDP, or TCP with its two-byte length prefix) never leaves the sandbox as such. Names
// the egress policy allows are looked up with the host's resolver (res_nquery, so the
// resolver configuration of the network namespace sentry-run runs in) and the addresses in
// the answer become reachable for this sandbox; other names get NXDOMAIN, so that not even
// the query (a known way to smuggle data out) reaches a DNS server.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "netstack/policy.h"

namespace sentry::netstack {

// The response to one DNS message, or nullopt for something that is not a query (dropped,
// as a server would). `udp`: cut answers longer than 512 bytes to the question with the TC
// bit, so that the client asks again over TCP.
std::optional<std::vector<uint8_t>> AnswerDnsQuery(std::span<const uint8_t> query,
                                                   EgressPolicy& policy, bool udp);

// The host files the resolver needs (/etc/resolv.conf), for sentry::PreopenHostFiles before
// the Sentry's pivot_root. Only its IPv4 name servers are used afterwards.
std::vector<std::string> HostResolverFiles();

}  // namespace sentry::netstack
