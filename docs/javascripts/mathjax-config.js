// MathJax settings for pymdownx.arithmatex (generic mode): typeset only the spans and blocks
// arithmatex marks, with the \( \) and \[ \] delimiters it writes. Loaded before MathJax.
window.MathJax = {
  tex: {
    inlineMath: [["\\(", "\\)"]],
    displayMath: [["\\[", "\\]"]],
    processEscapes: true,
    processEnvironments: true,
  },
  options: {
    ignoreHtmlClass: ".*|",
    processHtmlClass: "arithmatex",
  },
};
