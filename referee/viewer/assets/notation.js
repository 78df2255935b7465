// The board view of a game without one of its own: the state's one-line notation.

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attributes, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value !== null && value !== undefined) node.setAttribute(name, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return node;
}

VIEWS.notation = {
  create(container, document_) {
    const frames = document_.frames;
    const box = el("p", { class: "notation", "data-notation": "" });
    container.append(el("p", {}, "The state in the game's notation:"), box);
    return {
      draw(index) {
        box.textContent = frames[index].state.notation;
        box.dataset.notation = frames[index].state.notation;
      },
      detail() {
        return [];
      },
      seatFigures() {
        return [];
      },
      legend() {
        return [];
      },
    };
  },
};
