# Warnings are errors on our own code only: generated protobuf sources and system headers are exempt.
function(collide_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror)
endfunction()
