#pragma once

#include <filesystem>
#include <string>

#include "common/result.h"

// Undo state is acted on as root, so only state that no one else could have written counts: a
// folder or file owned by the running user (root, normally), writable by no group or other user,
// and not a symbolic link. Anything else is refused with a message that names it.
namespace collide::injectors {

Status check_state_folder(const std::filesystem::path& folder);

// Reads a state file after the same checks, made on the opened file itself so that nothing can
// be swapped in between the check and the read.
Result<std::string> read_state_file(const std::filesystem::path& path);

// Writes a state file readable and writable by its owner only, via a temporary name and a
// rename, so that a reader never sees half a file.
Status write_state_file(const std::filesystem::path& path, const std::string& text);

// Creates a state folder (and its parents) for the running user only, or checks the one there.
Status make_state_folder(const std::filesystem::path& folder, std::filesystem::perms mode);

}  // namespace collide::injectors
