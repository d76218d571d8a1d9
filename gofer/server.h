// The gofer process:
//   sentry gofer --sock-fd=N [--owner=UID:GID]
//                --attach=NAME=HOSTPATH[:ro|:rw[,submounts=auto|none]] ...
//
// Opens every attach root (a host directory; NAME is what the Sentry passes to
// Client::Attach; submounts: which host mounts below it it serves, see submounts.h, default
// auto; --owner: the files it creates belong to UID:GID, see ServerOptions), confines itself
// (confine.h), says hello on the socket and then serves requests (protocol.h) one at a time
// until the Sentry closes its end. Exits 0 then, 2 on bad arguments, 1 if an attach root
// cannot be opened or the socket fails.
#pragma once

namespace sentry::gofer {

// `argv[0]` is the subcommand name ("gofer"); the flags follow.
int GoferMain(int argc, char** argv);

}  // namespace sentry::gofer
