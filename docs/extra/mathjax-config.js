// MathJax 2 for the notebooks' math, offline: rag-lib docs copies MathJax from the jupyter-server-mathjax package
// to extra/mathjax/ (this file loads before it). Each notebook page carries nbconvert's own MathJax configuration
// (`$...$` inline, `$$...$$` display), which MathJax runs when it starts.
window.MathJax = {
  config: ["TeX-AMS-MML_HTMLorMML-full.js", "Safe.js"],
  // the package ships the STIX-Web web fonts only (no TeX fonts, no image fonts)
  "HTML-CSS": {availableFonts: [], preferredFont: null, webFont: "STIX-Web", imageFont: null},
  // mkdocs-jupyter keeps each code cell's text for its copy button in a hidden div.clipboard-copy-txt: not math
  tex2jax: {ignoreClass: "tex2jax_ignore|clipboard-copy-txt"},
  menuSettings: {zoom: "None"},
  messageStyle: "none"
};
