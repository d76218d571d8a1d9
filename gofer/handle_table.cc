#include "gofer/handle_table.h"

#include <unistd.h>

#include <utility>
#include <vector>

namespace sentry::gofer {

HandleTable::~HandleTable() {
  for (auto& [h, e] : entries_) {
    if (e.fd >= 0) close(e.fd);
  }
}

Handle HandleTable::AddDir(int fd, bool opath, const struct stat& st, uint64_t mnt_id,
                           size_t attach) {
  Handle h = next_++;
  HandleEntry& e = entries_[h];
  e.is_dir = true;
  e.attach = attach;
  e.fd = fd;
  e.opath = opath;
  e.dev = st.st_dev;
  e.ino = st.st_ino;
  e.mnt_id = mnt_id;
  return h;
}

Handle HandleTable::AddSealedDir(const struct stat& st, size_t attach) {
  Handle h = AddDir(-1, false, st, 0, attach);
  entries_[h].sealed = std::make_unique<struct stat>(st);
  return h;
}

Handle HandleTable::AddFile(Handle parent, std::string name, bool indexed) {
  HandleEntry& p = entries_.at(parent);
  p.refs++;
  Handle h = next_++;
  HandleEntry& e = entries_[h];
  e.attach = p.attach;
  e.parent = parent;
  e.indexed = indexed;
  SetName(h, e, std::move(name));
  return h;
}

void HandleTable::SetName(Handle h, HandleEntry& e, std::string name) {
  if (!e.indexed) {
    e.name = std::move(name);
    return;
  }
  if (!e.name.empty()) {
    auto [first, last] = by_name_.equal_range(e.name);
    for (auto it = first; it != last; ++it) {
      if (it->second == h) {
        by_name_.erase(it);
        break;
      }
    }
  }
  e.name = std::move(name);
  if (!e.name.empty()) by_name_.emplace(e.name, h);
}

HandleEntry* HandleTable::Get(Handle h) {
  auto it = entries_.find(h);
  if (it == entries_.end() || !it->second.client_open) return nullptr;
  return &it->second;
}

HandleEntry& HandleTable::ParentOf(const HandleEntry& e) { return entries_.at(e.parent); }

void HandleTable::Close(Handle h) {
  HandleEntry* e = Get(h);
  if (e == nullptr) return;
  e->client_open = false;
  Unref(h);
}

void HandleTable::Unref(Handle h) {
  // Freeing a non-directory drops its parent's reference; directories have no parent.
  while (h != 0) {
    auto it = entries_.find(h);
    if (it == entries_.end() || --it->second.refs > 0) return;
    HandleEntry& e = it->second;
    Handle parent = e.parent;
    if (e.fd >= 0) close(e.fd);
    SetName(h, e, "");
    entries_.erase(it);
    h = parent;
  }
}

std::vector<Handle> HandleTable::Named(const HandleEntry& dir, const std::string& name) {
  std::vector<Handle> out;
  auto [first, last] = by_name_.equal_range(name);
  for (auto it = first; it != last; ++it) {
    if (SameDir(ParentOf(entries_.at(it->second)), dir)) out.push_back(it->second);
  }
  return out;
}

void HandleTable::Removed(const HandleEntry& dir, const std::string& name) {
  for (Handle h : Named(dir, name)) SetName(h, entries_.at(h), "");
}

void HandleTable::Renamed(Handle old_dir, const std::string& old_name, Handle new_dir,
                          const std::string& new_name, bool exchange) {
  HandleEntry& od = entries_.at(old_dir);
  HandleEntry& nd = entries_.at(new_dir);
  // Collect first: moving an entry must not make it match the other side.
  std::vector<Handle> moved = Named(od, old_name);
  std::vector<Handle> displaced = Named(nd, new_name);
  // Take the new parent reference before dropping the old one: they may be the same entry.
  // Unref frees at most a directory entry other than od and nd (which the client holds),
  // never one of the collected non-directories.
  for (Handle h : displaced) {
    HandleEntry& e = entries_.at(h);
    if (!exchange) {
      SetName(h, e, "");  // the file it named was replaced
      continue;
    }
    od.refs++;
    Unref(std::exchange(e.parent, old_dir));
    SetName(h, e, old_name);
  }
  for (Handle h : moved) {
    HandleEntry& e = entries_.at(h);
    nd.refs++;
    Unref(std::exchange(e.parent, new_dir));
    SetName(h, e, new_name);
  }
}

}  // namespace sentry::gofer
