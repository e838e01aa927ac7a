//! Offsets in a file's text and the protocol's positions: LSP counts columns in UTF-16 code units
//! (the default position encoding), the build counts them in characters, our indexes in bytes.

use lsp_types::Position;

/// The byte offset where each line starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex { starts }
    }

    fn line_of(&self, offset: usize) -> usize {
        self.starts
            .partition_point(|&s| s <= offset)
            .saturating_sub(1)
    }

    /// The protocol position of a byte offset (clamped to the text, and to a character boundary).
    pub fn position(&self, text: &str, offset: usize) -> Position {
        let offset = floor_boundary(text, offset.min(text.len()));
        let line = self.line_of(offset);
        let start = self.starts[line];
        let character: usize = text[start..offset].chars().map(char::len_utf16).sum();
        Position::new(line as u32, character as u32)
    }

    /// The byte offset of a protocol position; past the end of a line is its end.
    pub fn offset(&self, text: &str, position: Position) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return text.len();
        };
        let end = self.line_end(text, position.line as usize);
        let mut units = 0;
        for (i, c) in text[start..end].char_indices() {
            if units >= position.character as usize {
                return start + i;
            }
            units += c.len_utf16();
        }
        end
    }

    /// The byte offset of the build's 1-based line and character column.
    pub fn offset_of(&self, text: &str, line: usize, column: usize) -> usize {
        let Some(&start) = self.starts.get(line.saturating_sub(1)) else {
            return text.len();
        };
        let end = self.line_end(text, line.saturating_sub(1));
        text[start..end]
            .char_indices()
            .nth(column.saturating_sub(1))
            .map_or(end, |(i, _)| start + i)
    }

    /// Where line `line` (0-based) ends, before its line break.
    pub fn line_end(&self, text: &str, line: usize) -> usize {
        let end = self.starts.get(line + 1).map_or(text.len(), |s| s - 1);
        if end > 0 && text.as_bytes().get(end - 1) == Some(&b'\r') {
            end - 1
        } else {
            end
        }
    }

    pub fn line_start(&self, line: usize) -> Option<usize> {
        self.starts.get(line).copied()
    }
}

pub fn floor_boundary(text: &str, mut offset: usize) -> usize {
    while offset > 0 && !text.is_char_boundary(offset) {
        offset -= 1;
    }
    offset
}
