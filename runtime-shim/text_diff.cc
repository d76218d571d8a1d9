// The shortest edit script between two lists of lines (Myers' O(ND) algorithm: for each
// number of edits d, the furthest point reached on every diagonal), then hunks around it.
#include "runtime-shim/text_diff.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace sentry::shim {
namespace {

// Past this many edits the trace (O(d^2) ints) is not kept: the whole text is replaced.
constexpr int kMaxEdits = 4000;

struct Line {
  std::string_view text;  // without its newline
  bool newline;           // false only for a last line without one
  bool operator==(const Line& o) const { return text == o.text && newline == o.newline; }
};

std::vector<Line> Lines(std::string_view s) {
  std::vector<Line> out;
  size_t i = 0;
  while (i < s.size()) {
    size_t j = s.find('\n', i);
    if (j == std::string_view::npos) {
      out.push_back({s.substr(i), false});
      break;
    }
    out.push_back({s.substr(i, j - i), true});
    i = j + 1;
  }
  return out;
}

enum class Op { kSame, kDel, kAdd };

// The edit script, in order: each op names a line of a (kSame, kDel) or of b (kAdd).
std::vector<Op> EditScript(const std::vector<Line>& a, const std::vector<Line>& b) {
  const int n = static_cast<int>(a.size()), m = static_cast<int>(b.size());
  const int max = std::min(n + m, kMaxEdits);
  // v[k + offset]: the furthest x on diagonal k = x - y after d edits.
  const int offset = max + 1;
  std::vector<int> v(2 * max + 3, 0);
  std::vector<std::vector<int>> trace;
  int found = -1;
  for (int d = 0; d <= max && found < 0; d++) {
    trace.emplace_back(v.begin() + offset - d - 1, v.begin() + offset + d + 2);
    for (int k = -d; k <= d; k += 2) {
      int x = (k == -d || (k != d && v[offset + k - 1] < v[offset + k + 1]))
                  ? v[offset + k + 1]
                  : v[offset + k - 1] + 1;
      int y = x - k;
      while (x < n && y < m && a[x] == b[y]) x++, y++;
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
  }
  std::vector<Op> ops;
  if (found < 0) {  // too different to be worth the trace: all out, all in
    ops.assign(n, Op::kDel);
    ops.insert(ops.end(), m, Op::kAdd);
    return ops;
  }
  int x = n, y = m;
  for (int d = found; d >= 0; d--) {
    const std::vector<int>& t = trace[d];  // t[i] is v[offset - d - 1 + i]
    auto at = [&](int k) { return t[k + d + 1]; };
    int k = x - y;
    int prev_k = (k == -d || (k != d && at(k - 1) < at(k + 1))) ? k + 1 : k - 1;
    int prev_x = d == 0 ? 0 : at(prev_k);
    int prev_y = prev_x - prev_k;
    if (d == 0) prev_y = 0;
    while (x > prev_x && y > prev_y) {
      ops.push_back(Op::kSame);
      x--, y--;
    }
    if (d > 0) ops.push_back(x == prev_x ? Op::kAdd : Op::kDel);
    x = prev_x;
    y = prev_y;
  }
  std::reverse(ops.begin(), ops.end());
  return ops;
}

void Range(std::string& out, char sign, int start, int count) {
  out += sign;
  // As diff -u: an empty range names the line before it.
  out += std::to_string(count == 0 ? start : start + 1);
  if (count != 1) out += "," + std::to_string(count);
}

void Emit(std::string& out, char sign, const Line& l) {
  out += sign;
  out.append(l.text);
  out += '\n';
  if (!l.newline) out += "\\ No newline at end of file\n";
}

}  // namespace

bool LooksBinary(std::string_view text) {
  return memchr(text.data(), '\0', std::min<size_t>(text.size(), 8192)) != nullptr;
}

std::string UnifiedHunks(std::string_view a_text, std::string_view b_text, int context) {
  std::vector<Line> a = Lines(a_text), b = Lines(b_text);
  std::vector<Op> ops = EditScript(a, b);
  // Positions in a and b before each op.
  std::vector<std::pair<int, int>> pos(ops.size() + 1);
  for (size_t i = 0; i < ops.size(); i++) {
    pos[i + 1] = {pos[i].first + (ops[i] != Op::kAdd), pos[i].second + (ops[i] != Op::kDel)};
  }
  std::string out;
  size_t i = 0;
  while (i < ops.size()) {
    if (ops[i] == Op::kSame) {
      i++;
      continue;
    }
    // A hunk: from `context` lines before this change to `context` after the last change
    // that is no more than 2 * context unchanged lines from the previous one.
    size_t start = i >= static_cast<size_t>(context) ? i - context : 0;
    while (start < i && ops[start] != Op::kSame) start++;
    size_t end = i;
    for (;;) {
      while (end < ops.size() && ops[end] != Op::kSame) end++;
      size_t same = end;
      while (same < ops.size() && ops[same] == Op::kSame) same++;
      if (same < ops.size() && same - end <= static_cast<size_t>(2 * context)) {
        end = same;
        continue;
      }
      end = std::min(end + context, same);
      break;
    }
    int a_count = pos[end].first - pos[start].first;
    int b_count = pos[end].second - pos[start].second;
    out += "@@ ";
    Range(out, '-', pos[start].first, a_count);
    out += ' ';
    Range(out, '+', pos[start].second, b_count);
    out += " @@\n";
    for (size_t j = start; j < end; j++) {
      switch (ops[j]) {
        case Op::kSame:
          Emit(out, ' ', a[pos[j].first]);
          break;
        case Op::kDel:
          Emit(out, '-', a[pos[j].first]);
          break;
        case Op::kAdd:
          Emit(out, '+', b[pos[j].second]);
          break;
      }
    }
    i = end;
  }
  return out;
}

}  // namespace sentry::shim
