#include "netstack/dns.h"

#include <arpa/inet.h>
#include <arpa/nameser.h>
#include <netdb.h>
#include <netinet/in.h>
#include <resolv.h>

#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>

#include "sentry/base/host_files.h"

namespace sentry::netstack {
namespace {

constexpr size_t kHeader = 12;
constexpr size_t kUdpLimit = 512;
constexpr int kRcodeServFail = 2, kRcodeNxDomain = 3, kRcodeNotImp = 4;

uint16_t Get16(std::span<const uint8_t> b, size_t off) {
  return static_cast<uint16_t>(b[off] << 8 | b[off + 1]);
}

struct Question {
  std::string name;  // dotted, without the final dot
  uint16_t type = 0;
  uint16_t klass = 0;
  size_t end = 0;  // offset just past the question
};

// The first question of `q`: labels only (a compression pointer in a question is refused).
std::optional<Question> ParseQuestion(std::span<const uint8_t> q) {
  Question out;
  size_t off = kHeader;
  for (;;) {
    if (off >= q.size()) return std::nullopt;
    uint8_t len = q[off++];
    if (len == 0) break;
    if (len > 63 || off + len > q.size()) return std::nullopt;
    if (!out.name.empty()) out.name += '.';
    out.name.append(reinterpret_cast<const char*>(&q[off]), len);
    off += len;
    if (out.name.size() > 253) return std::nullopt;
  }
  if (off + 4 > q.size()) return std::nullopt;
  out.type = Get16(q, off);
  out.klass = Get16(q, off + 2);
  out.end = off + 4;
  return out;
}

// A response of only the header and the question, with `rcode`.
std::vector<uint8_t> Bare(std::span<const uint8_t> query, const Question& qn, int rcode,
                          bool truncated) {
  std::vector<uint8_t> r(query.begin(), query.begin() + static_cast<ptrdiff_t>(qn.end));
  uint8_t rd = query[2] & 0x01;
  r[2] = static_cast<uint8_t>(0x80 | rd | (truncated ? 0x02 : 0));  // QR, opcode 0, RD
  r[3] = static_cast<uint8_t>(0x80 | rcode);                        // RA
  r[4] = 0, r[5] = 1;                                               // one question
  std::memset(&r[6], 0, 6);                                         // no records
  return r;
}

// Notes the A and AAAA records of `answer` as addresses `name` resolved to.
void NoteAddresses(const std::vector<uint8_t>& answer, const std::string& name,
                   EgressPolicy& policy) {
  ns_msg msg;
  if (ns_initparse(answer.data(), static_cast<int>(answer.size()), &msg) != 0) return;
  int n = ns_msg_count(msg, ns_s_an);
  for (int i = 0; i < n; i++) {
    ns_rr rr;
    if (ns_parserr(&msg, ns_s_an, i, &rr) != 0) continue;
    InetAddr a;
    if (ns_rr_type(rr) == ns_t_a && ns_rr_rdlen(rr) == 4) {
      a.ip[10] = a.ip[11] = 0xff;
      std::memcpy(&a.ip[12], ns_rr_rdata(rr), 4);
    } else if (ns_rr_type(rr) == ns_t_aaaa && ns_rr_rdlen(rr) == 16) {
      std::memcpy(a.ip.data(), ns_rr_rdata(rr), 16);
    } else {
      continue;
    }
    policy.NoteResolved(name, a);
  }
}

// The IPv4 name servers of the host's /etc/resolv.conf, read from the fd kept before the
// Sentry's pivot_root (HostResolverFiles): res_ninit itself opens the file by path, which
// the empty root no longer has, and then falls back to 127.0.0.1.
std::vector<in_addr> HostNameservers() {
  std::vector<in_addr> out;
  std::istringstream in(ReadHostFile("/etc/resolv.conf").value_or(""));
  std::string line;
  while (std::getline(in, line) && out.size() < MAXNS) {
    std::istringstream words(line);
    std::string key, value;
    in_addr a{};
    if (words >> key >> value && key == "nameserver" &&
        inet_pton(AF_INET, value.c_str(), &a) == 1) {
      out.push_back(a);
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> HostResolverFiles() { return {"/etc/resolv.conf"}; }

std::optional<std::vector<uint8_t>> AnswerDnsQuery(std::span<const uint8_t> query,
                                                   EgressPolicy& policy, bool udp) {
  if (query.size() < kHeader) return std::nullopt;
  if (query[2] & 0x80) return std::nullopt;  // a response, not a query
  std::optional<Question> qn = ParseQuestion(query);
  if (!qn || Get16(query, 4) != 1) return std::nullopt;
  int opcode = (query[2] >> 3) & 0x0f;
  if (opcode != 0) return Bare(query, *qn, kRcodeNotImp, false);
  if (!policy.NameAllowed(qn->name)) return Bare(query, *qn, kRcodeNxDomain, false);

  struct __res_state state;
  std::memset(&state, 0, sizeof(state));
  if (res_ninit(&state) != 0) return Bare(query, *qn, kRcodeServFail, false);
  if (std::vector<in_addr> servers = HostNameservers(); !servers.empty()) {
    // Before any query, so that res_send builds its own list from these.
    for (size_t i = 0; i < servers.size(); i++) {
      state.nsaddr_list[i] = sockaddr_in{};
      state.nsaddr_list[i].sin_family = AF_INET;
      state.nsaddr_list[i].sin_port = htons(NAMESERVER_PORT);
      state.nsaddr_list[i].sin_addr = servers[i];
      if (state._u._ext.nsaddrs[i] != nullptr) {
        free(state._u._ext.nsaddrs[i]);
        state._u._ext.nsaddrs[i] = nullptr;
      }
    }
    state.nscount = static_cast<int>(servers.size());
  }
  state.retrans = 2;
  state.retry = 2;
  std::vector<uint8_t> answer(65535);
  int n = res_nquery(&state, qn->name.c_str(), qn->klass, qn->type, answer.data(),
                     static_cast<int>(answer.size()));
  int herr = state.res_h_errno;
  res_nclose(&state);
  if (n < static_cast<int>(kHeader)) {
    // res_nquery reports NXDOMAIN and an empty answer through h_errno.
    if (herr == HOST_NOT_FOUND) return Bare(query, *qn, kRcodeNxDomain, false);
    if (herr == NO_DATA) return Bare(query, *qn, 0, false);
    return Bare(query, *qn, kRcodeServFail, false);
  }
  answer.resize(static_cast<size_t>(n));
  NoteAddresses(answer, qn->name, policy);
  if (udp && answer.size() > kUdpLimit) return Bare(query, *qn, 0, true);
  answer[0] = query[0];  // the guest's query id
  answer[1] = query[1];
  return answer;
}

}  // namespace sentry::netstack
