// memfd_create: a regular file on a hidden tmpfs, unlinked from birth, shown as
// "/memfd:NAME (deleted)". Seals (F_ADD_SEALS / F_GET_SEALS) restrict writes and size changes
// through every fd of it.
//
// Lock order: MemfdInode::seals_mu_ -> the tmpfs file's locks.
#pragma once

#include <memory>
#include <string>

#include "vfs/file.h"

namespace sentry::vfs {

// `allow_sealing`: MFD_ALLOW_SEALING; without it the file is born with F_SEAL_SEAL.
Result<FileRef> NewMemfd(const std::string& name, bool allow_sealing, const Creds& creds);

// fcntl F_ADD_SEALS / F_GET_SEALS. EINVAL for files that are not memfds.
Result<void> AddSeals(const FileRef& file, uint32_t seals);
Result<uint32_t> GetSeals(const FileRef& file);

}  // namespace sentry::vfs
