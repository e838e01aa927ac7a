//! `ocf serve [--addr ADDR] [--packs DIR…] [--store URL] [--max-open N] [--public-url URL…]
//! [--cors ORIGIN…] [--player-dice] [--history N] [--history-days D] [--max-memory MIB]`: the engine as a service
//! (crate `ocf-service`). Which ruleset a character computes on is decided here, as `ocf sheet`
//! decides it: the `--packs` given, else each pin's `testdata/packs/<id>` folder.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};

use ocf_load::character::CharacterFile;
use ocf_model::{Character, Ruleset};
use ocf_service::rulesets::Rulesets;
use serde_json::Value;

#[derive(clap::Args)]
pub struct Args {
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:7878")]
    addr: SocketAddr,
    /// Pack source folders or release `.json` files, in load order, for every character; without
    /// them each character's pins are read from `testdata/packs/<id>` above the current directory.
    #[arg(long = "packs", alias = "pack", num_args = 1..)]
    packs: Vec<PathBuf>,
    /// Where characters and accounts are stored: `sqlite:PATH` or
    /// `postgres://user@host:port/db` (over TLS; `sslmode=require` for a server on another
    /// machine unless the URL says otherwise).
    #[arg(long, default_value = "sqlite:ocf.sqlite3")]
    store: String,
    /// The address users reach the service by (`https://sheet.example.org`, behind a reverse
    /// proxy): its host is accepted in `Host`, its origin in `Origin`, and the session cookie is
    /// `Secure` when it is https.
    #[arg(long = "public-url")]
    public_urls: Vec<String>,
    /// An origin whose pages may call the API cross-origin (CORS); closed when not given.
    #[arg(long = "cors")]
    cors: Vec<String>,
    /// Players may roll their own dice (their actions' policy may pause for dice); otherwise the
    /// service rolls every die of a player's action.
    #[arg(long)]
    player_dice: bool,
    /// Characters open at once (the least recently used unwatched one is closed past it).
    #[arg(long, default_value_t = 1000)]
    max_open: usize,
    /// Revisions of each character kept in its history (the newest; each write makes one).
    #[arg(long, default_value_t = 100)]
    history: u64,
    /// Drop revisions older than this many days from a character's history as it is written (the
    /// current revision is always kept); kept however old when not given.
    #[arg(long = "history-days")]
    history_days: Option<u64>,
    /// A ceiling on the service's resident memory, in MiB: past it, opening a character first
    /// closes the least recently used unwatched ones (they stay stored).
    #[arg(long = "max-memory")]
    max_memory: Option<u64>,
    /// Character files to store at start, each under its `id`, unless a character of that ID is
    /// stored already (then the stored one, with its edits, is kept).
    #[arg(long = "character")]
    characters: Vec<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    let store = match ocf_service::store::open(&args.store) {
        Ok(store) => store,
        Err(error) => {
            eprintln!("ocf serve: {error}");
            return ExitCode::FAILURE;
        }
    };
    let limits = ocf_service::Limits {
        max_open: args.max_open.max(1),
        history: ocf_service::store::Keep {
            count: args.history.max(1),
            max_age: args
                .history_days
                .map(|days| days.saturating_mul(86_400).min(i64::MAX as u64) as i64),
        },
        max_memory: args.max_memory.map(|mib| mib.saturating_mul(1 << 20)),
        ..Default::default()
    };
    let rulesets = PackRulesets::new(args.packs);
    let app = ocf_service::App::new(Box::new(rulesets), store, limits);
    let mut settings = app.settings();
    for url in &args.public_urls {
        let url = url.trim_end_matches('/');
        let Some((scheme, rest)) = url.split_once("://") else {
            eprintln!("ocf serve: `--public-url {url}` is not a URL (`https://host[:port]`)");
            return ExitCode::FAILURE;
        };
        let authority = rest.split('/').next().unwrap_or_default();
        let host = authority
            .rsplit_once(':')
            .filter(|(_, port)| port.chars().all(|c| c.is_ascii_digit()))
            .map_or(authority, |(host, _)| host);
        settings.hosts.push(host.to_ascii_lowercase());
        settings.origins.push(format!("{scheme}://{authority}"));
        settings.secure_cookie |= scheme == "https";
    }
    settings.cors = args.cors.clone();
    settings.player_dice = args.player_dice;
    app.set_settings(settings);
    for path in &args.characters {
        let file = match crate::character::read(path) {
            Ok(file) => file,
            Err(problem) => {
                eprintln!("{}", crate::build::render(Path::new(""), &problem));
                return ExitCode::FAILURE;
            }
        };
        match app.create(None, file.character, None, None) {
            Ok(made) => eprintln!(
                "ocf serve: stored `{}` from {}",
                made["id"].as_str().unwrap_or_default(),
                path.display()
            ),
            Err(error) if error.errors.iter().any(|e| e["code"] == "duplicate-id") => {}
            Err(error) => {
                for e in &error.errors {
                    eprintln!(
                        "{}: {}: {}",
                        path.display(),
                        e["code"].as_str().unwrap_or_default(),
                        e["message"].as_str().unwrap_or_default()
                    );
                }
                return ExitCode::FAILURE;
            }
        }
    }
    match ocf_service::run(args.addr, app) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("ocf serve: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Rulesets made from pack folders, each made once and shared by the characters that pin the same
/// packs.
pub struct PackRulesets {
    packs: Vec<PathBuf>,
    made: Mutex<HashMap<String, Arc<Ruleset>>>,
}

impl PackRulesets {
    pub fn new(packs: Vec<PathBuf>) -> PackRulesets {
        PackRulesets {
            packs,
            made: Mutex::new(HashMap::new()),
        }
    }
}

impl Rulesets for PackRulesets {
    fn ruleset_for(&self, character: &Character) -> Result<(String, Arc<Ruleset>), Vec<Value>> {
        let key = if self.packs.is_empty() {
            character
                .packs
                .iter()
                .map(|pin| format!("{}@{}", pin.id.as_str(), pin.version.as_str()))
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            "--packs".to_owned()
        };
        let mut made = self.made.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(ruleset) = made.get(&key) {
            return Ok((key, ruleset.clone()));
        }
        let file = CharacterFile {
            character: character.clone(),
            locations: Default::default(),
        };
        let ruleset = crate::character::ruleset(Path::new("."), &file, &self.packs)
            .map_err(|problems| problems.iter().map(problem_json).collect::<Vec<_>>())?;
        let ruleset = Arc::new(ruleset);
        made.insert(key.clone(), ruleset.clone());
        Ok((key, ruleset))
    }
}

/// A build or load problem as the service's errors are written: `code`, `message`, `path` (the
/// problem's pointer into the character). A pack's own problems keep their file and position; a
/// problem of the character sent has no file (it was not read from one), and a missing pack is
/// told as the service's, not as a CLI flag to pass.
fn problem_json(problem: &ocf_load::build::Problem) -> Value {
    let mut value = serde_json::to_value(problem).unwrap_or_default();
    if let Value::Object(map) = &mut value {
        let pointer = map
            .remove("pointer")
            .unwrap_or(Value::String(String::new()));
        map.insert("path".into(), pointer);
        if map.get("file").and_then(Value::as_str) == Some(".") {
            map.remove("file");
            map.remove("line");
            map.remove("column");
        }
        if map.get("code").and_then(Value::as_str) == Some("missing-dependency")
            && let Some(pack) = map.get("data").and_then(|d| d.get("pack")).cloned()
        {
            map.insert(
                "message".into(),
                Value::String(format!(
                    "the pinned pack {pack} is not among the packs this service has"
                )),
            );
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_pack_is_told_as_the_services_not_as_a_cli_flag() {
        let character: Character = serde_json::from_value(serde_json::json!({
            "specVersion": "1.0.0", "id": "pc",
            "packs": [{ "id": "no-such-pack", "version": "1.0.0" }]
        }))
        .unwrap();
        let Err(errors) = PackRulesets::new(Vec::new()).ruleset_for(&character) else {
            panic!("the pack is not there");
        };
        let error = &errors[0];
        assert_eq!(error["code"], "missing-dependency", "{error}");
        assert_eq!(error["path"], "/packs/0", "{error}");
        assert!(error.get("file").is_none(), "{error}");
        let message = error["message"].as_str().unwrap();
        assert!(!message.contains("--pack"), "{message}");
        assert!(message.contains("no-such-pack"), "{message}");
    }
}
