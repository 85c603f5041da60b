// Saving files and folders so that a crash never leaves a broken one under its name: every
// file is written at a temporary name, flushed to disk (fsync), renamed over the target and
// its folder flushed; a folder is assembled under a hidden name and swapped in. And the
// check, before training starts, that a save target can be written at all. Header-only:
// the safetensors writer, the checkpoints and the evaluation's best model all use it.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace bertc {

/// A file or folder that cannot be saved; what() names the path.
class SaveError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Flushes a file's or a folder's data and metadata to disk.
inline void syncToDisk(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    std::string reason = std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    throw SaveError(path + ": cannot flush to disk: " + reason);
  }
  ::close(fd);
}

/// rename(2), which replaces `to` in one step; throws SaveError naming both paths.
inline void renameOrThrow(const std::filesystem::path &from, const std::filesystem::path &to) {
  if (std::rename(from.c_str(), to.c_str()) != 0)
    throw SaveError(to.string() + ": cannot rename " + from.string() +
                    " to it: " + std::strerror(errno));
}

/// The folder holding `path` ("." for a bare file name).
inline std::filesystem::path folderOf(const std::filesystem::path &path) {
  return path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
}

/// `path` absolute and without a trailing separator, so that it has a file name.
inline std::filesystem::path namedPath(const std::string &path) {
  std::filesystem::path named = std::filesystem::absolute(path).lexically_normal();
  return named.filename().empty() ? named.parent_path() : named;
}

/// Replaces `path` so that readers see the old file or the whole new one, never a part:
/// `writeTemporary(temporary)` creates the content at a hidden temporary name in the same
/// folder, which is flushed to disk, renamed over `path`, and the folder flushed. If
/// anything fails or `writeTemporary` throws, the temporary is removed, the previous file
/// is left as it was and the error propagates.
inline void writeFileAtomically(const std::string &path,
                                const std::function<void(const std::string &)> &writeTemporary) {
  std::filesystem::path target = path;
  std::string temporary = (folderOf(target) / ("." + target.filename().string() + ".tmp")).string();
  try {
    writeTemporary(temporary);
    syncToDisk(temporary);
    renameOrThrow(temporary, target);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw;
  }
  syncToDisk(folderOf(target));
}

/// writeFileAtomically with `text` as the content.
inline void writeTextFileAtomically(const std::string &path, const std::string &text) {
  writeFileAtomically(path, [&](const std::string &temporary) {
    std::FILE *file = std::fopen(temporary.c_str(), "wb");
    if (!file)
      throw SaveError(temporary + ": cannot create: " + std::strerror(errno));
    bool written = std::fwrite(text.data(), 1, text.size(), file) == text.size();
    if (std::fclose(file) != 0 || !written)
      throw SaveError(temporary + ": write failed: " + std::strerror(errno));
  });
}

/// The hidden names a folder swap of `destination` uses beside it: FOLDER/.NAME.partial
/// (being assembled) and FOLDER/.NAME.old (the previous copy, while it is swapped out).
inline std::filesystem::path swapPartial(const std::filesystem::path &destination) {
  return destination.parent_path() / ("." + destination.filename().string() + ".partial");
}
inline std::filesystem::path swapOld(const std::filesystem::path &destination) {
  return destination.parent_path() / ("." + destination.filename().string() + ".old");
}

/// Finishes a folder swap of `destination` that a crash interrupted: between its two
/// renames only the previous copy exists, as .NAME.old, and it is renamed back; once the new
/// copy is in place a leftover .NAME.old is stale and removed. Returns whether it renamed.
inline bool recoverFolderSwap(const std::filesystem::path &destination) {
  std::filesystem::path old = swapOld(destination);
  std::error_code error;
  if (!std::filesystem::exists(old, error))
    return false;
  if (std::filesystem::exists(destination, error)) {
    std::filesystem::remove_all(old, error);
    return false;
  }
  renameOrThrow(old, destination);
  syncToDisk(folderOf(destination).string());
  return true;
}

/// Replaces the folder `destination` with the one `assemble(partial)` writes:
///  1. finish an interrupted earlier swap (recoverFolderSwap), remove a crash's partial;
///  2. assemble FOLDER/.NAME.partial and flush it;
///  3. move the previous `destination`, if any, aside to FOLDER/.NAME.old;
///  4. rename the partial folder to `destination`, flush FOLDER, remove the old copy.
/// Only hidden names are ever incomplete, and a crash between 3 and 4 leaves the previous
/// copy as .NAME.old, which recoverFolderSwap puts back.
inline void replaceFolderAtomically(const std::string &destination,
                                    const std::function<void(const std::string &)> &assemble) {
  namespace fs = std::filesystem;
  fs::path target = namedPath(destination);
  fs::path partial = swapPartial(target), old = swapOld(target);
  std::error_code ignored;
  // On failure: no partial folder stays behind, and a previous copy moved aside comes back.
  auto cleanUp = [&]() noexcept {
    fs::remove_all(partial, ignored);
    try {
      recoverFolderSwap(target);
    } catch (const SaveError &) {
      // The previous copy stays as .NAME.old, where the next save or resume recovers it.
    }
  };
  try {
    fs::create_directories(target.parent_path());
    recoverFolderSwap(target);
    fs::remove_all(partial);
    fs::create_directory(partial);
    assemble(partial.string());
    syncToDisk(partial.string());
    if (fs::exists(target))
      renameOrThrow(target, old);
    renameOrThrow(partial, target);
  } catch (const fs::filesystem_error &error) {
    cleanUp();
    throw SaveError(target.string() + ": cannot save: " + error.what());
  } catch (...) {
    cleanUp();
    throw;
  }
  syncToDisk(target.parent_path().string());
  fs::remove_all(old, ignored);
}

/// Throws SaveError, naming `flag` and `folder`, unless `folder` is a folder (created here
/// if missing) in which a file can be created: checked before step 1, so that a read-only
/// or mistyped target fails at once rather than losing the trained weights at the end.
inline void requireWritableFolder(const std::string &flag, const std::string &folder) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::exists(folder, error) && !fs::is_directory(folder, error))
    throw SaveError(flag + " " + folder + ": exists and is not a folder");
  fs::create_directories(folder, error);
  if (error)
    throw SaveError(flag + " " + folder + ": cannot create the folder: " + error.message());
  std::string probe = (fs::path(folder) / ".bertc-write-check-XXXXXX").string();
  int fd = ::mkstemp(probe.data());
  if (fd < 0)
    throw SaveError(flag + " " + folder + ": cannot write in the folder: " + std::strerror(errno));
  ::close(fd);
  fs::remove(probe, error);
}

} // namespace bertc
