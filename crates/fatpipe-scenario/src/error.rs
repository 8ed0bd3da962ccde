//! Typed scenario errors. Each names the field path (`topology.bottleneck.rate`) and the fix.

use thiserror::Error;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not valid TOML.
    Parse,
    /// A field is unknown, missing, of the wrong type or out of range.
    Invalid,
    /// A congestion-control name that is not registered, or bad parameters for one.
    UnknownAlgorithm,
    /// A flow whose endpoints are not connected.
    Unroutable,
}

#[derive(Clone, Debug, Error, PartialEq)]
#[error("{}", self.render())]
pub struct ScenarioError {
    pub kind: ErrorKind,
    /// Dotted path of the offending field ("" for the whole file).
    pub path: String,
    pub message: String,
    pub line: Option<usize>,
}

impl ScenarioError {
    pub fn invalid(path: impl Into<String>, message: impl Into<String>) -> Self {
        ScenarioError {
            kind: ErrorKind::Invalid,
            path: path.into(),
            message: message.into(),
            line: None,
        }
    }
    pub fn parse(message: String, line: Option<usize>) -> Self {
        ScenarioError {
            kind: ErrorKind::Parse,
            path: String::new(),
            message,
            line,
        }
    }
    pub fn with_kind(mut self, kind: ErrorKind) -> Self {
        self.kind = kind;
        self
    }
    fn render(&self) -> String {
        let mut s = String::new();
        if let Some(l) = self.line {
            s.push_str(&format!("line {l}: "));
        }
        if !self.path.is_empty() {
            s.push_str(&format!("{}: ", self.path));
        }
        s.push_str(&self.message);
        s
    }
}
