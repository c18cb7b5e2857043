//! The headless browser the web-page tests drive (`AGON_BROWSER`):
//! Chromium's headless shell from the system's packages, installed with
//! apt-get when it is missing and we are root (as on CI).

use anyhow::{Result, bail};
use xshell::{Shell, cmd};

/// Binaries that can dump a page's DOM after its scripts ran.
const CANDIDATES: [&str; 4] = [
    "chromium-headless-shell",
    "chromium",
    "chromium-browser",
    "google-chrome",
];

fn find(sh: &Shell) -> Option<String> {
    CANDIDATES.iter().find_map(|name| {
        let lookup = format!("command -v {name}");
        cmd!(sh, "sh -c {lookup}")
            .quiet()
            .ignore_stderr()
            .read()
            .ok()
            .map(|path| path.trim().to_owned())
            .filter(|path| !path.is_empty())
    })
}

/// The browser's path, installed first when it is missing and possible.
pub fn ensure(sh: &Shell) -> Result<String> {
    if let Ok(path) = std::env::var("AGON_BROWSER")
        && !path.trim().is_empty()
    {
        return Ok(path);
    }
    if let Some(path) = find(sh) {
        return Ok(path);
    }
    let root = cmd!(sh, "id -u")
        .quiet()
        .read()
        .is_ok_and(|uid| uid.trim() == "0");
    let apt = cmd!(sh, "sh -c 'command -v apt-get'")
        .quiet()
        .ignore_stdout()
        .ignore_stderr()
        .run()
        .is_ok();
    if root && apt {
        println!("== installing chromium-headless-shell (the web page's browser tests)");
        cmd!(sh, "apt-get update -qq").run()?;
        cmd!(sh, "apt-get install -y -qq chromium-headless-shell")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .run()?;
        if let Some(path) = find(sh) {
            return Ok(path);
        }
    }
    bail!(
        "the web page's tests need a headless Chromium: install the Debian package \
         chromium-headless-shell (as root, `cargo xtask test` installs it), or point \
         AGON_BROWSER at a Chromium binary"
    )
}
