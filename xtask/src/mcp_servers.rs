//! `cargo xtask mcp-servers`: installs the MCP servers the tests run
//! (`@modelcontextprotocol/server-filesystem` and `server-everything`) and
//! the MCP inspector whose command-line mode drives `agon mcp`, at
//! the versions `xtask/mcp-servers/package-lock.json` pins) with the
//! machine's npm into `target/mcp-servers`, and prints the directory of
//! their executables, which `cargo xtask test` passes to the tests as
//! `AGON_MCP_SERVERS_DIR`. An install that matches the lock is kept.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use xshell::{Shell, cmd};

/// The executables the tests start.
const SERVERS: [&str; 3] = [
    "mcp-server-filesystem",
    "mcp-server-everything",
    "mcp-inspector",
];

/// Installs the servers if needed; returns the directory of their
/// executables.
pub fn ensure(sh: &Shell, root: &Path) -> Result<PathBuf> {
    let source = root.join("xtask/mcp-servers");
    let target = root.join("target/mcp-servers");
    let bin = target.join("node_modules/.bin");
    let lock = sh.read_file(source.join("package-lock.json"))?;
    let installed = sh
        .read_file(target.join("package-lock.json"))
        .is_ok_and(|l| l == lock)
        && SERVERS.iter().all(|s| bin.join(s).exists());
    if installed {
        return Ok(bin);
    }
    if cmd!(sh, "npm --version")
        .quiet()
        .ignore_stdout()
        .run()
        .is_err()
    {
        bail!(
            "npm is missing: the MCP tests run servers from the npm registry (Debian: apt-get install nodejs npm)"
        );
    }
    sh.create_dir(&target)?;
    for file in ["package.json", "package-lock.json"] {
        sh.copy_file(source.join(file), target.join(file))?;
    }
    cmd!(
        sh,
        "npm ci --prefix {target} --no-audit --no-fund --loglevel=error"
    )
    .run()
    .context("npm ci of the MCP servers the tests run")?;
    for server in SERVERS {
        if !bin.join(server).exists() {
            bail!("{} is missing after npm ci", bin.join(server).display());
        }
    }
    Ok(bin)
}
