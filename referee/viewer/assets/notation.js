// The board view of a game without one of its own: the state's one-line notation.

const SVG_NS = "http://www.w3.org/2000/svg";

function svg(tag, attributes, ...children) {
  return filled(document.createElementNS(SVG_NS, tag), attributes, children);
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
