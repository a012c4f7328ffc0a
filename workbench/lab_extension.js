/*
 * The course's citations in JupyterLab: the `workbench lab` extension (see workbench/lab.py).
 *
 * jupyterlab-myst parses {cite:p}`key` and {cite:t}`key` but resolves no citation (it reads no BibTeX file, no
 * myst.yml and no frontmatter bibliography): every key shows as a yellow warning, "Citation Not Found".  This
 * plugin replaces each such group, in notebooks and in Markdown documents alike, by the citation the course site
 * prints (sphinxcontrib-bibtex's author-year style: "[Author, Year]" for cite:p, "Author [Year]" for cite:t), a
 * link whose tooltip is the entry and which opens the Bibliography panel at it.  The entries come from
 * static/citations.json, which `workbench lab` writes from the course's references.bib at every start.
 *
 * No build step: this file is the extension's whole "remote entry".  JupyterLab loads it with a <script> tag,
 * then calls window._JUPYTERLAB[name].init(shareScope) and .get('./extension') (webpack module federation's
 * container interface, which every prebuilt extension implements); the modules the plugin needs
 * (@lumino/widgets for the panel, @jupyterlab/rendermime for the maths in titles) are the application's own
 * instances, read from that share scope.
 *
 * jupyterlab-myst renders with React, so the plugin never removes or rewrites a node React made: it marks the
 * warning group with an attribute (hidden by this extension's style sheet) and inserts the citation after it.
 * When React re-renders a cell the marks and insertions are checked again, and stale ones are removed.
 *
 * One more gap of jupyterlab-myst is closed here: its Markdown renderer ignores the fragment a link asks for, so
 * a link reference.md#reference-a7 opened the document at its top.  The plugin watches the command JupyterLab
 * runs for such a link and, once the section with that id is on the page, scrolls it into view.
 */
(function () {
  'use strict';

  const NAME = 'attention-workbench-course';
  const COMMAND = 'attention-workbench:bibliography';
  const MISSING = 'span[title="Citation Not Found"]'; // jupyterlab-myst's unresolved citation
  const MARK = 'data-workbench-cite'; // on a hidden warning group: the keys it cites
  const CITE_CLASS = 'workbench-cite';
  const PANEL_ID = 'workbench-bibliography';
  const LOCAL_LINK = 'rendermime:handle-local-link'; // JupyterLab's command for a link to a file
  const STATIC = new URL('.', document.currentScript.src).href;

  let shareScope = null;

  /** A module of the application's share scope (the instance JupyterLab itself uses). */
  async function shared(name) {
    const versions = (shareScope && shareScope[name]) || {};
    const loaded = Object.keys(versions).filter(v => versions[v].loaded);
    const candidates = (loaded.length ? loaded : Object.keys(versions)).sort((a, b) =>
      a.localeCompare(b, undefined, { numeric: true })
    );
    if (!candidates.length) {
      return null;
    }
    const factory = await versions[candidates[candidates.length - 1]].get();
    return factory();
  }

  const STYLE = `
[${MARK}] { display: none !important; }
.${CITE_CLASS} a { color: var(--jp-content-link-color); text-decoration: none; cursor: pointer; }
.${CITE_CLASS} a:hover { text-decoration: underline; }
#${PANEL_ID} { overflow: auto; padding: 8px 24px; font-size: var(--jp-content-font-size1);
  color: var(--jp-content-font-color1); background: var(--jp-layout-color0); }
#${PANEL_ID} h1 { font-size: var(--jp-content-font-size4); }
#${PANEL_ID} .workbench-bibliography-entry { display: flex; gap: 0.75em; padding: 4px 6px; border-radius: 4px; }
#${PANEL_ID} .workbench-bibliography-label { flex: none; min-width: 3em; color: var(--jp-content-font-color2); }
#${PANEL_ID} .workbench-bibliography-entry.workbench-target { background: var(--jp-layout-color2); }
`;

  function element(tag, attributes, ...children) {
    const node = document.createElement(tag);
    Object.entries(attributes || {}).forEach(([k, v]) => node.setAttribute(k, v));
    children.forEach(child => node.append(child));
    return node;
  }

  /** The author part of an author-year citation, with "et al." in italics as on the site. */
  function authorNodes(entry) {
    if (!entry.etal) {
      return [entry.author];
    }
    return [entry.author + ' ', element('em', {}, 'et al.')];
  }

  /**
   * Scroll the element ``fragment`` (#id) of ``node`` into view once it is rendered, and keep it there while the
   * document settles (it shows, renders again, typesets its maths), until the reader scrolls, clicks or types in
   * it.  (A long document can take many seconds to render on a busy machine: the clock starts when it shows.)
   */
  function reveal(node, fragment) {
    const id = decodeURIComponent(fragment.replace(/^#/, ''));
    const reader = ['wheel', 'keydown', 'mousedown', 'touchstart'];
    let shown = null; // the section's element, and when it was first on the page
    let since = 0;
    const scroll = () => {
      const target = node.querySelector(`[id="${CSS.escape(id)}"]`);
      if (target && target.offsetParent !== null) {
        if (target !== shown) {
          shown = target; // first shown, or rendered anew
          since = Date.now();
        }
        target.scrollIntoView({ block: 'start' });
      }
      // Kept in view until 5 s after its element last changed; given up if it has not shown after 2 minutes.
      if ((shown && Date.now() - since > 5000) || (!shown && Date.now() - start > 120000) || !node.isConnected) {
        stop();
      }
    };
    const stop = () => {
      clearInterval(timer);
      reader.forEach(type => node.removeEventListener(type, stop));
    };
    const start = Date.now();
    const timer = setInterval(scroll, 200);
    reader.forEach(type => node.addEventListener(type, stop, { passive: true }));
    requestAnimationFrame(scroll);
  }

  /**
   * Documents opened by a link scroll to the fragment it names.  A link in rendered Markdown runs the command
   * rendermime:handle-local-link with the file's path and the fragment; the command opens the document and hands
   * it the fragment, which jupyterlab-myst's renderer then ignores.  So once the command has run, the document it
   * opened is scrolled here.
   */
  function followFragments(app) {
    app.commands.commandExecuted.connect((_, executed) => {
      const { path, id: fragment } = executed.args || {};
      if (executed.id !== LOCAL_LINK || !path || !fragment) {
        return;
      }
      Promise.resolve(executed.result).then(() => {
        const opened = Array.from(app.shell.widgets('main')).find(w => w.context && w.context.path === path);
        if (opened) {
          reveal(opened.node, fragment);
        }
      });
    });
  }

  function activate(app, rendermime, widgets) {
    followFragments(app);
    let data = { entries: [] };
    let panel = null;
    const byKey = new Map();
    const unknown = new Set(); // keys already reported missing from the bibliography

    document.head.append(element('style', { id: 'workbench-cite-style' }, STYLE));

    function link(key, ...children) {
      const entry = byKey.get(key);
      const a = element('a', { href: `#${PANEL_ID}-${key}`, title: entry.text, 'data-key': key }, ...children);
      a.addEventListener('click', event => {
        event.preventDefault();
        event.stopPropagation();
        void app.commands.execute(COMMAND, { key });
      });
      return a;
    }

    /** The citation the site prints for ``keys``, cited parenthetically or in the text. */
    function citation(keys, parenthetical) {
      const span = element('span', { class: CITE_CLASS, 'data-keys': keys.join(' ') });
      keys.forEach((key, i) => {
        const entry = byKey.get(key);
        if (i > 0) {
          span.append(', ');
        }
        if (parenthetical) {
          span.append(link(key, ...authorNodes(entry), `, ${entry.year}`));
        } else {
          span.append(...authorNodes(entry), ' [', link(key, entry.year), ']');
        }
      });
      if (parenthetical) {
        span.prepend('[');
        span.append(']');
      }
      return span;
    }

    /** The warning unit a missing citation belongs to: its cite group, or the span itself when alone. */
    function unitOf(missing) {
      const parent = missing.parentElement;
      return parent && parent.classList.contains('cite-group') ? parent : missing;
    }

    function keysOf(unit) {
      const spans = unit.matches(MISSING) ? [unit] : Array.from(unit.children);
      if (!spans.length || !spans.every(s => s.matches(MISSING))) {
        return null; // a group with something else in it: leave it to jupyterlab-myst
      }
      return spans.map(s => s.textContent.trim());
    }

    function scan() {
      // Insertions whose warning group was re-rendered or removed by React go first.
      document.querySelectorAll(`.${CITE_CLASS}`).forEach(span => {
        const unit = span.previousElementSibling;
        if (!unit || unit.getAttribute(MARK) !== span.dataset.keys || keysOf(unit)?.join(' ') !== span.dataset.keys) {
          if (unit && unit.getAttribute(MARK) === span.dataset.keys) {
            unit.removeAttribute(MARK);
          }
          span.remove();
        }
      });
      const units = new Set(Array.from(document.querySelectorAll(MISSING), unitOf));
      units.forEach(unit => {
        const keys = keysOf(unit);
        if (!keys || !keys.every(key => byKey.has(key))) {
          (keys || [])
            .filter(key => !byKey.has(key) && !unknown.has(key))
            .forEach(key => {
              unknown.add(key);
              console.warn(`workbench: no bibliography entry for ${key}`);
            });
          return; // jupyterlab-myst's warning stays visible: the key is not in the bibliography
        }
        const next = unit.nextElementSibling;
        if (unit.getAttribute(MARK) === keys.join(' ') && next && next.classList.contains(CITE_CLASS)) {
          return;
        }
        const parenthetical = !unit.classList.contains('narrative');
        unit.setAttribute(MARK, keys.join(' '));
        unit.after(citation(keys, parenthetical));
      });
    }

    function showBibliography(key) {
      if (!panel || panel.isDisposed) {
        panel = new widgets.Widget();
        panel.id = PANEL_ID;
        panel.title.label = 'Bibliography';
        panel.title.closable = true;
        const body = element('div', { class: 'workbench-bibliography-body' });
        body.append(element('h1', {}, 'Bibliography'));
        body.append(element('p', {}, data.source || ''));
        data.entries.forEach(entry => {
          const text = element('div', { class: 'workbench-bibliography-text' });
          text.innerHTML = entry.html; // pybtex's HTML rendering of the committed references.bib
          body.append(
            element(
              'div',
              { class: 'workbench-bibliography-entry', id: `${PANEL_ID}-${entry.key}`, 'data-key': entry.key },
              element('span', { class: 'workbench-bibliography-label' }, `[${entry.number}]`),
              text
            )
          );
        });
        panel.node.append(body);
        app.shell.add(panel, 'main', { mode: 'split-right' });
        const typesetter = rendermime && rendermime.latexTypesetter;
        if (typesetter) {
          typesetter.typeset(body);
        }
      }
      app.shell.activateById(PANEL_ID);
      if (key) {
        panel.node.querySelectorAll('.workbench-target').forEach(n => n.classList.remove('workbench-target'));
        const target = panel.node.querySelector(`[data-key="${CSS.escape(key)}"]`);
        if (target) {
          target.classList.add('workbench-target');
          // After the panel's first layout (a panel just added has no size yet).
          requestAnimationFrame(() => requestAnimationFrame(() => target.scrollIntoView({ block: 'center' })));
        }
      }
    }

    app.commands.addCommand(COMMAND, {
      label: 'Course Bibliography',
      caption: 'The course bibliography (references.bib), at the entry of a key when one is given',
      execute: args => showBibliography(args && args.key)
    });

    let queued = false;
    const observer = new MutationObserver(() => {
      if (!queued) {
        queued = true;
        requestAnimationFrame(() => {
          queued = false;
          scan();
        });
      }
    });

    fetch(`${STATIC}citations.json`, { cache: 'no-store' })
      .then(response => {
        if (!response.ok) {
          throw new Error(`${response.status} ${response.statusText}`);
        }
        return response.json();
      })
      .then(json => {
        data = json;
        data.entries.forEach(entry => byKey.set(entry.key, entry));
        if (data.error) {
          console.warn(`workbench: ${data.error}`);
        }
        observer.observe(document.body, { childList: true, subtree: true, characterData: true });
        scan();
      })
      .catch(error => console.error('workbench: the course bibliography could not be read', error));
  }

  const container = {
    init: scope => {
      shareScope = scope;
    },
    get: async module => {
      if (module !== './extension') {
        throw new Error(`${NAME} has no module ${module}`);
      }
      const rendermime = await shared('@jupyterlab/rendermime');
      const widgets = await shared('@lumino/widgets');
      const plugin = {
        id: `${NAME}:citations`,
        description:
          "Resolves the course notebooks' {cite:p} and {cite:t} citations, shows the bibliography, and scrolls a " +
          'document a link opens to the section it names.',
        autoStart: true,
        requires: [],
        // Optional (the maths in the bibliography's titles is typeset with it), so the citations work without it.
        optional: rendermime ? [rendermime.IRenderMimeRegistry] : [],
        activate: (app, registry) => activate(app, registry || null, widgets)
      };
      return () => ({ __esModule: true, default: [plugin] });
    }
  };
  window._JUPYTERLAB = window._JUPYTERLAB || {};
  window._JUPYTERLAB[NAME] = container;
})();
