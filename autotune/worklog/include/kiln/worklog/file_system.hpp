// Where a worklog may be written: never on a network file system. SQLite's locks do not hold
// there (NFS, SMB and the parallel file systems of clusters implement POSIX locks loosely or not
// at all) and WAL mode, which the worklog uses, needs memory shared between the processes of one
// machine. A tuning run on a cluster writes its worklog to node-local storage and copies the file
// to shared storage when it ends (scripts/slurm/); kiln merge combines such copies.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace kiln::worklog {

// The name of the network file system with this statfs f_type ("NFS", "CIFS/SMB", "Lustre",
// "GPFS", ...), or nothing for a local one.
std::optional<std::string> network_file_system_name(std::uint64_t statfs_type);

// The network file system `path` is on (the folder it would be created in, when it does not
// exist), or nothing.
std::optional<std::string> network_file_system_of(const std::filesystem::path& path);

// Throws kiln::Error naming the path and the file system when `path` is on a network file system.
void require_local_file_system(const std::filesystem::path& path);

// Throws kiln::Error naming the path and what it is when `path` is not a regular file that a
// worklog could be: missing, a folder, a FIFO, a device or a socket.
void require_worklog_file(const std::filesystem::path& path);

}  // namespace kiln::worklog
