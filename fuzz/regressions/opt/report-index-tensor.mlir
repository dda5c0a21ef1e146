func.func @finalize_rank(%acc: tensor<?xi8>, %m: tensor<?xindex>) {
  return
}
