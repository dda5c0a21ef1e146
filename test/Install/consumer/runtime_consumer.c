/* Loads an attnc module's manifest through the installed runtime (no GPU
 * needed) and lists its kernels with their parameter counts. */
#include <attnc-c/Runtime.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODULE_DIR\n", argv[0]);
    return 2;
  }
  attnc_module *m = NULL;
  if (attnc_module_load(argv[1], &m) != ATTNC_OK) {
    fprintf(stderr, "error: %s\n", attnc_last_error());
    return 1;
  }
  printf("module %s for %s\n", attnc_module_name(m), attnc_module_chip(m));
  for (size_t i = 0; i < attnc_module_num_kernels(m); ++i) {
    attnc_kernel *k = attnc_module_kernel_at(m, i);
    printf("kernel %s (%s): %zu params\n", attnc_kernel_name(k),
           attnc_kernel_kind(k), attnc_kernel_num_params(k));
  }
  attnc_module_unload(m);
  return 0;
}
