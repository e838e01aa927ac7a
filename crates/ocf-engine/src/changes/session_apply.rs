//! `Session::apply`: applyChanges on an open character, as edits of its inputs, so only what the
//! changes touch is recomputed. A batch that fails leaves the session as it was.

use ocf_model::{Change, Character};

use super::Options;
use super::applier::Applier;
use super::batch::{Applied, ChangeError};
use crate::session::{CharacterId, Session};

impl Session {
    /// Applies `batch` to the open character `id`, its `competing` picks left out while it runs.
    /// On success the session holds the new file, its picks as they were ([`Session::file`]); on
    /// failure it is brought back to the file it held before.
    #[tracing::instrument(name = "session.apply", level = "info", skip_all, fields(character = ?id, changes = batch.len()))]
    pub fn apply(
        &mut self,
        id: CharacterId,
        batch: &[Change],
        options: Options<'_>,
    ) -> Result<Applied, ChangeError> {
        let original = match self.file(id) {
            Ok(file) => file.clone(),
            Err(e) => return Err(ChangeError::new("unknown-character", "", e.to_string())),
        };
        let working = original.clone();
        self.apply_working(id, &original, working, false, batch, options)
    }

    /// [`Session::apply`] to `base` in place of the file the session holds: the session is
    /// brought to `base`, then the batch runs. On failure the session holds `base`. For a caller
    /// that holds the file to start from (an action's proposed sheet going back to its given
    /// file), whose copy then serves as the one the batch edits.
    #[tracing::instrument(name = "session.apply", level = "info", skip_all, fields(character = ?id, changes = batch.len()))]
    pub fn apply_to(
        &mut self,
        id: CharacterId,
        base: &Character,
        batch: &[Change],
        options: Options<'_>,
    ) -> Result<Applied, ChangeError> {
        if let Err(e) = self.file(id) {
            return Err(ChangeError::new("unknown-character", "", e.to_string()));
        }
        self.apply_working(id, base, base.clone(), true, batch, options)
    }

    /// Runs `batch` on `working` (a copy of `original`), bringing the session to it first when
    /// `bring` (else the session holds `original` already).
    fn apply_working(
        &mut self,
        id: CharacterId,
        original: &Character,
        mut working: Character,
        bring: bool,
        batch: &[Change],
        options: Options<'_>,
    ) -> Result<Applied, ChangeError> {
        // The picks among competing options reach only computeSheet (EF "Competing options":
        // applyChanges uses each group's recommended option): the batch runs on the file without
        // them, and the file it makes carries them again.
        let picks = std::mem::take(&mut working.competing);
        if bring || !picks.is_empty() {
            let _ = self.update(id, &working);
        }
        let applier = Applier::new(self, id, working, options);
        match applier.run(batch) {
            Ok(mut applied) => {
                if !picks.is_empty() {
                    applied.character.competing = picks;
                    let _ = self.update(id, &applied.character);
                }
                Ok(applied)
            }
            Err(error) => {
                let _ = self.update(id, original);
                Err(error)
            }
        }
    }
}
