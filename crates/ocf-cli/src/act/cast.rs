//! The characters of one `ocf act`: the actor and each participant given as a character file
//! (`--participant ROLE=CHARACTER`). Each participant's view is read from its own computed sheet
//! (EA "Starting an action" 4: "each taken by the app from that character's own computed sheet");
//! a handoff runs on the participant's own character (EA "Handoffs" 4); `--apply` applies each
//! character's changes to its own file.

use std::path::{Path, PathBuf};

use ocf_engine::{CharacterId, Session};
use serde_json::{Value as Json, json};

/// One character taking part: where its file is and where it is open.
pub struct Member {
    /// The file's `id`, as views and `character` name it.
    pub id: String,
    pub path: PathBuf,
    /// Its session in [`Cast::sessions`] (characters pinning the same packs share one).
    pub session: usize,
    pub cid: CharacterId,
    /// The changes proposed for it, in order, to apply with `--apply`.
    pub changes: Vec<Json>,
}

/// The actor (member 0) and the participants given as character files.
pub struct Cast {
    pub sessions: Vec<(Vec<String>, Session)>,
    pub members: Vec<Member>,
}

impl Cast {
    /// The cast with the actor opened from `path`.
    pub fn new(path: &Path, packs: &[PathBuf]) -> Result<Cast, String> {
        let mut cast = Cast {
            sessions: Vec::new(),
            members: Vec::new(),
        };
        cast.open(path, packs)?;
        Ok(cast)
    }

    /// Opens the character file at `path` (its ruleset shared with any character pinning the same
    /// packs); `duplicate-id` style clashes are the engine's to report, by the views.
    pub fn open(&mut self, path: &Path, packs: &[PathBuf]) -> Result<usize, String> {
        let file = ocf_cli::character::read(path).map_err(|p| problem_text(&p))?;
        let key: Vec<String> = file
            .character
            .packs
            .iter()
            .map(|p| format!("{}@{}", p.id.as_str(), p.version))
            .chain(packs.iter().map(|p| p.display().to_string()))
            .collect();
        let session = match self.sessions.iter().position(|(k, _)| *k == key) {
            Some(s) => s,
            None => {
                let ruleset = ocf_cli::character::ruleset(path, &file, packs).map_err(|ps| {
                    ps.iter()
                        .map(problem_text)
                        .collect::<Vec<String>>()
                        .join("\n")
                })?;
                self.sessions.push((key, Session::new(ruleset)));
                self.sessions.len() - 1
            }
        };
        let cid = self.sessions[session].1.open(&file.character, &[]);
        self.members.push(Member {
            id: file.character.id.to_string(),
            path: path.to_owned(),
            session,
            cid,
            changes: Vec::new(),
        });
        Ok(self.members.len() - 1)
    }

    pub fn session(&self, member: usize) -> &Session {
        &self.sessions[self.members[member].session].1
    }

    pub fn find(&self, id: &str) -> Option<usize> {
        self.members.iter().position(|m| m.id == id)
    }

    /// The member's view `{ id, values }`: every field value of its own computed sheet, by
    /// qualified ID (the action reads the fields its roles declare, pack prefix ignored).
    pub fn view(&self, member: usize) -> Result<Json, String> {
        let m = &self.members[member];
        let sheet = self
            .session(member)
            .sheet_json(m.cid)
            .map_err(|e| format!("{}: {e}", m.path.display()))?;
        let values: serde_json::Map<String, Json> = sheet["values"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.clone(), v.get("value")?.clone())))
            .collect();
        Ok(json!({ "id": m.id, "values": values }))
    }

    /// Files each proposed change under the character it is for: `to: self` without `character`
    /// is `runner`'s own; a change naming a `character` of the cast is that one's. Changes for a
    /// character not in the cast are left (the app has no file for it).
    pub fn collect(&mut self, runner: usize, result: &Json) {
        for p in result["proposedChanges"].as_array().into_iter().flatten() {
            let to = match p.get("character").and_then(Json::as_str) {
                Some(id) => self.find(id),
                None if p["to"] == "self" => Some(runner),
                None => None,
            };
            if let Some(m) = to {
                self.members[m].changes.push(p["change"].clone());
            }
        }
    }

    /// `--apply`: each character's changes applied to it as one batch (not strict, as the proposed
    /// sheet applies them: EA "The proposed sheet"), through its own applyChanges, so its own
    /// resistances, absorbing and overflow apply. Every batch is applied before any file is
    /// written: one that fails writes nothing. Then each character with changes is written over
    /// its own file (the actor's to `output` when given, written even without changes). Returns
    /// `(file, changes)` per file written.
    pub fn apply_all(
        &mut self,
        dice: &mut dyn ocf_dice::DiceFunction,
        output: Option<&Path>,
    ) -> Result<Vec<(PathBuf, usize)>, String> {
        let mut to_write = Vec::new();
        for i in 0..self.members.len() {
            let changes = std::mem::take(&mut self.members[i].changes);
            let m = &self.members[i];
            let out = match (i, output) {
                (0, Some(o)) => o.to_owned(),
                _ if changes.is_empty() => continue,
                _ => m.path.clone(),
            };
            let batch = ocf_engine::changes::read_batch(&Json::Array(changes.clone()))
                .map_err(|e| format!("--apply {}: {}: {}", m.id, e.code, e.message))?;
            let options = ocf_engine::ApplyOptions {
                links: Default::default(),
                strict: false,
                dice: Some(&mut *dice),
            };
            let (cid, path) = (m.cid, m.path.clone());
            let session = &mut self.sessions[m.session].1;
            session.apply(cid, &batch, options).map_err(|e| {
                format!(
                    "--apply {}: {} at {}: {} (no file written)",
                    path.display(),
                    e.code,
                    e.path,
                    e.message
                )
            })?;
            to_write.push((i, out, changes.len()));
        }
        // Every text made before any is written: each file's own text patched, its comments kept.
        let mut texts = Vec::new();
        for (i, out, n) in to_write {
            let m = &self.members[i];
            let file = self.sessions[m.session]
                .1
                .file(m.cid)
                .map_err(|e| e.to_string())?;
            texts.push((ocf_cli::character::text(&out, file, Some(&m.path))?, out, n));
        }
        let mut written = Vec::new();
        for (text, out, n) in texts {
            ocf_cli::character::write_text(&out, &text)?;
            written.push((out, n));
        }
        Ok(written)
    }
}

/// A file's read problem as `file:line:col: code: message`.
fn problem_text(problem: &ocf_load::build::Problem) -> String {
    problem.headline(Path::new(""))
}
