#include <elf.h>
#include <sys/mman.h>

#include <cstring>

#include "sentry/base/wait_queue.h"
#include "sentry/loader/exec.h"

namespace sentry::loader {
namespace {

// Where position-independent executables go, as on Linux (ELF_ET_DYN_BASE without ASLR).
constexpr uint64_t kPieBase = 0x555555554000;

int ProtOf(uint32_t pf) {
  return (pf & PF_R ? PROT_READ : 0) | (pf & PF_W ? PROT_WRITE : 0) |
         (pf & PF_X ? PROT_EXEC : 0);
}

// Reads exactly `dst.size()` bytes at `off` or fails with ENOEXEC.
Result<void> ReadAt(kernel::Task& t, const vfs::FileRef& f, std::span<uint8_t> dst,
                    uint64_t off) {
  size_t done = 0;
  while (done < dst.size()) {
    size_t n = SENTRY_TRY(f->PRead(t, dst.subspan(done), off + done));
    if (n == 0) return Errno(ENOEXEC);
    done += n;
  }
  return Ok();
}

struct Image {
  Elf64_Ehdr eh;
  std::vector<Elf64_Phdr> ph;
};

Result<Image> ReadHeaders(kernel::Task& t, const vfs::FileRef& f) {
  Image im;
  SENTRY_TRY(ReadAt(t, f, {reinterpret_cast<uint8_t*>(&im.eh), sizeof(im.eh)}, 0));
  const Elf64_Ehdr& eh = im.eh;
  if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return Errno(ENOEXEC);
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64) return Errno(ENOEXEC);
  if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) return Errno(ENOEXEC);
  if (eh.e_phentsize != sizeof(Elf64_Phdr) || eh.e_phnum == 0 || eh.e_phnum > 128) {
    return Errno(ENOEXEC);
  }
  im.ph.resize(eh.e_phnum);
  SENTRY_TRY(ReadAt(t, f,
                    {reinterpret_cast<uint8_t*>(im.ph.data()), im.ph.size() * sizeof(Elf64_Phdr)},
                    eh.e_phoff));
  return im;
}

// The name /proc/PID/maps shows for a mapping of `f`: its path as the task sees it.
std::string MapName(kernel::Task& t, const vfs::FileRef& f) {
  if (!f->dentry()) return f->Name();
  return t.kernel().vfs().PathString(t.fs().root(), {f->mount(), f->dentry()});
}

// Maps one PT_LOAD segment as Linux's ELF loader does: the file pages straight from the host
// fd (shared with the host page cache), the tail of the last file page zeroed, and anonymous
// pages for the rest of the bss. Returns false (and maps nothing) when the file cannot be
// mapped directly: not host-backed, or a platform that cannot map host fds.
Result<bool> MapSegmentFromFile(platform::Context& ctx, mm::MemoryManager& mm,
                                const vfs::FileRef& f, const Elf64_Phdr& p, uint64_t bias,
                                const std::string& name) {
  vfs::FileDescription::HostFdHold host = f->HoldHostFd();
  int host_fd = host.fd;
  if (host_fd < 0 || p.p_filesz == 0) return false;
  if ((p.p_vaddr & (kPageSize - 1)) != (p.p_offset & (kPageSize - 1))) return Errno(ENOEXEC);
  int prot = ProtOf(p.p_flags);
  uint64_t start = PageRoundDown(bias + p.p_vaddr);
  uint64_t file_end = bias + p.p_vaddr + p.p_filesz;
  uint64_t file_page_end = PageRoundUp(file_end);
  uint64_t end = PageRoundUp(bias + p.p_vaddr + p.p_memsz);
  bool zero_tail = p.p_memsz > p.p_filesz && file_end < file_page_end;
  // The zeroed tail needs a writable page; a read-only bss (rare) gets its protection after.
  int map_prot = zero_tail ? prot | PROT_WRITE : prot;
  struct stat st {};
  SENTRY_TRY(f->Stat(&st));
  mm::MapSource source{st.st_dev, st.st_ino, true};
  Result<uint64_t> at = mm.Map(ctx, start, file_page_end - start, map_prot, MAP_PRIVATE | MAP_FIXED,
                               name, host_fd, PageRoundDown(p.p_offset), &source);
  if (!at.ok()) {
    if (at.error().code() == EOPNOTSUPP) return false;
    return at.error();
  }
  if (zero_tail) {
    std::vector<uint8_t> zeros(file_page_end - file_end);
    if (mm.as().WriteMemory(GuestAddr(file_end), zeros) != zeros.size()) return Errno(ENOMEM);
    if (map_prot != prot) SENTRY_TRY(mm.Protect(ctx, start, file_page_end - start, prot));
  }
  if (end > file_page_end) {
    SENTRY_TRY(mm.MapAnonymous(ctx, file_page_end, end - file_page_end, prot,
                               MAP_PRIVATE | MAP_FIXED, name));
  }
  return true;
}

// Maps one PT_LOAD segment by copying: private anonymous pages filled from the file, given
// their protection later (the pages must stay writable while later segments that share a
// page are copied in). `*mapped_end` is where the previous copied segment's pages ended.
Result<void> CopySegment(kernel::Task& t, platform::Context& ctx, mm::MemoryManager& mm,
                         const vfs::FileRef& f, const Elf64_Phdr& p, uint64_t bias,
                         const std::string& name, uint64_t* mapped_end) {
  uint64_t start = PageRoundDown(bias + p.p_vaddr);
  uint64_t end = PageRoundUp(bias + p.p_vaddr + p.p_memsz);
  uint64_t map_from = std::max(start, *mapped_end);
  if (end > map_from) {
    SENTRY_TRY(mm.MapAnonymous(ctx, map_from, end - map_from, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_FIXED, name));
  }
  std::vector<uint8_t> data(p.p_filesz);
  SENTRY_TRY(ReadAt(t, f, data, p.p_offset));
  if (mm.as().WriteMemory(GuestAddr(bias + p.p_vaddr), data) != data.size()) {
    return Errno(ENOMEM);
  }
  *mapped_end = std::max(*mapped_end, end);
  return Ok();
}

// Maps the PT_LOAD segments at `bias` (ET_DYN: chosen here when bias == 0).
Result<uint64_t> MapSegments(kernel::Task& t, platform::Context& ctx, mm::MemoryManager& mm,
                             const vfs::FileRef& f, const Image& im, uint64_t* brk,
                             uint64_t dyn_base) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const auto& p : im.ph) {
    if (p.p_type != PT_LOAD) continue;
    if (p.p_filesz > p.p_memsz) return Errno(ENOEXEC);
    lo = std::min(lo, PageRoundDown(p.p_vaddr));
    hi = std::max(hi, PageRoundUp(p.p_vaddr + p.p_memsz));
  }
  if (lo >= hi) return Errno(ENOEXEC);
  uint64_t bias = 0;
  if (im.eh.e_type == ET_DYN) {
    // Reserve the whole span, then place the segments inside it.
    int fixed = dyn_base ? MAP_FIXED_NOREPLACE : 0;
    uint64_t at = SENTRY_TRY(mm.MapAnonymous(ctx, dyn_base, hi - lo, PROT_NONE, MAP_PRIVATE | fixed));
    bias = at - lo;
  }
  std::string name = MapName(t, f);
  // Segments are mapped in order, each MAP_FIXED over whatever an earlier one left on a page
  // they share, as Linux does. Copied segments get their protection at the end.
  std::vector<const Elf64_Phdr*> copied;
  uint64_t mapped_end = 0;
  for (const auto& p : im.ph) {
    if (p.p_type != PT_LOAD) continue;
    if (copied.empty() && SENTRY_TRY(MapSegmentFromFile(ctx, mm, f, p, bias, name))) continue;
    SENTRY_TRY(CopySegment(t, ctx, mm, f, p, bias, name, &mapped_end));
    copied.push_back(&p);
  }
  for (const Elf64_Phdr* p : copied) {
    uint64_t start = PageRoundDown(bias + p->p_vaddr);
    uint64_t end = PageRoundUp(bias + p->p_vaddr + p->p_memsz);
    SENTRY_TRY(mm.Protect(ctx, start, end - start, ProtOf(p->p_flags)));
  }
  if (brk) *brk = bias + hi;
  return bias;
}

}  // namespace

Result<LoadedElf> LoadElf(kernel::Task& t, platform::Context& ctx, mm::MemoryManager& mm,
                          const vfs::FileRef& file) {
  Image im = SENTRY_TRY(ReadHeaders(t, file));
  std::string interp;
  for (const auto& p : im.ph) {
    if (p.p_type != PT_INTERP) continue;
    if (p.p_filesz < 2 || p.p_filesz > 4096) return Errno(ENOEXEC);
    std::vector<uint8_t> buf(p.p_filesz);
    SENTRY_TRY(ReadAt(t, file, buf, p.p_offset));
    interp.assign(reinterpret_cast<char*>(buf.data()), strnlen(reinterpret_cast<char*>(buf.data()), buf.size()));
  }
  LoadedElf out;
  uint64_t bias = SENTRY_TRY(MapSegments(t, ctx, mm, file, im, &out.brk, kPieBase));
  out.main_entry = bias + im.eh.e_entry;
  out.entry = out.main_entry;
  out.phent = sizeof(Elf64_Phdr);
  out.phnum = im.ph.size();
  for (const auto& p : im.ph) {
    if (p.p_type == PT_PHDR) out.phdr = bias + p.p_vaddr;
  }
  if (out.phdr == 0) {
    for (const auto& p : im.ph) {
      if (p.p_type == PT_LOAD && p.p_offset <= im.eh.e_phoff &&
          im.eh.e_phoff < p.p_offset + p.p_filesz) {
        out.phdr = bias + p.p_vaddr + (im.eh.e_phoff - p.p_offset);
      }
    }
  }
  if (!interp.empty()) {
    auto f = SENTRY_TRY(OpenExec(t, interp));
    Image ii = SENTRY_TRY(ReadHeaders(t, f));
    if (ii.eh.e_type != ET_DYN) return Errno(ELIBBAD);
    out.base = SENTRY_TRY(MapSegments(t, ctx, mm, f, ii, nullptr, 0));
    out.entry = out.base + ii.eh.e_entry;
  }
  return out;
}

}  // namespace sentry::loader
