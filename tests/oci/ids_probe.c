// Installed set-user-ID root in a test bundle (tests/oci/cli_process.sh): prints the ids it
// runs with and its no_new_privs bit, to show whether execve granted the file's owner.
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(void) {
  printf("uid=%d euid=%d nnp=%d\n", (int)getuid(), (int)geteuid(),
         prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0));
  return 0;
}
