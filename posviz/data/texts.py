# ruff: noqa: E501  (prose data: long lines are quotations)
"""Public-domain English prose (all published before 1900) for probing models on real text.

Sources: Jane Austen, *Pride and Prejudice* (1813), ch. 1; Charles Dickens, *A Tale of Two Cities*
(1859), book 1 ch. 1; Herman Melville, *Moby-Dick* (1851), ch. 1; Abraham Lincoln, Gettysburg Address
(1863); Arthur Conan Doyle, "A Scandal in Bohemia" (1891). Openings only, lightly normalised quotes.
"""

from __future__ import annotations

AUSTEN = (
    "It is a truth universally acknowledged, that a single man in possession of a good fortune, must "
    "be in want of a wife. However little known the feelings or views of such a man may be on his "
    "first entering a neighbourhood, this truth is so well fixed in the minds of the surrounding "
    "families, that he is considered the rightful property of some one or other of their daughters. "
    '"My dear Mr. Bennet," said his lady to him one day, "have you heard that Netherfield Park is let '
    'at last?" Mr. Bennet replied that he had not. "But it is," returned she; "for Mrs. Long has just '
    'been here, and she told me all about it." Mr. Bennet made no answer. "Do you not want to know who '
    'has taken it?" cried his wife impatiently. "You want to tell me, and I have no objection to '
    'hearing it." This was invitation enough. "Why, my dear, you must know, Mrs. Long says that '
    "Netherfield is taken by a young man of large fortune from the north of England; that he came "
    "down on Monday in a chaise and four to see the place, and was so much delighted with it, that he "
    "agreed with Mr. Morris immediately; that he is to take possession before Michaelmas, and some of "
    'his servants are to be in the house by the end of next week." "What is his name?" "Bingley." '
    '"Is he married or single?" "Oh! Single, my dear, to be sure! A single man of large fortune; four '
    'or five thousand a year. What a fine thing for our girls!"'
)

DICKENS = (
    "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of "
    "foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of "
    "Light, it was the season of Darkness, it was the spring of hope, it was the winter of despair, we "
    "had everything before us, we had nothing before us, we were all going direct to Heaven, we were "
    "all going direct the other way; in short, the period was so far like the present period, that "
    "some of its noisiest authorities insisted on its being received, for good or for evil, in the "
    "superlative degree of comparison only. There were a king with a large jaw and a queen with a "
    "plain face, on the throne of England; there were a king with a large jaw and a queen with a fair "
    "face, on the throne of France. In both countries it was clearer than crystal to the lords of the "
    "State preserves of loaves and fishes, that things in general were settled for ever."
)

MELVILLE = (
    "Call me Ishmael. Some years ago, never mind how long precisely, having little or no money in my "
    "purse, and nothing particular to interest me on shore, I thought I would sail about a little and "
    "see the watery part of the world. It is a way I have of driving off the spleen and regulating the "
    "circulation. Whenever I find myself growing grim about the mouth; whenever it is a damp, drizzly "
    "November in my soul; whenever I find myself involuntarily pausing before coffin warehouses, and "
    "bringing up the rear of every funeral I meet; and especially whenever my hypos get such an upper "
    "hand of me, that it requires a strong moral principle to prevent me from deliberately stepping "
    "into the street, and methodically knocking people's hats off, then, I account it high time to "
    "get to sea as soon as I can. This is my substitute for pistol and ball. With a philosophical "
    "flourish Cato throws himself upon his sword; I quietly take to the ship. There is nothing "
    "surprising in this. If they but knew it, almost all men in their degree, some time or other, "
    "cherish very nearly the same feelings towards the ocean with me."
)

LINCOLN = (
    "Four score and seven years ago our fathers brought forth on this continent, a new nation, "
    "conceived in Liberty, and dedicated to the proposition that all men are created equal. Now we are "
    "engaged in a great civil war, testing whether that nation, or any nation so conceived and so "
    "dedicated, can long endure. We are met on a great battle-field of that war. We have come to "
    "dedicate a portion of that field, as a final resting place for those who here gave their lives "
    "that that nation might live. It is altogether fitting and proper that we should do this. But, in "
    "a larger sense, we can not dedicate, we can not consecrate, we can not hallow this ground. The "
    "brave men, living and dead, who struggled here, have consecrated it, far above our poor power to "
    "add or detract. The world will little note, nor long remember what we say here, but it can never "
    "forget what they did here. It is for us the living, rather, to be dedicated here to the "
    "unfinished work which they who fought here have thus far so nobly advanced. It is rather for us "
    "to be here dedicated to the great task remaining before us, that from these honored dead we take "
    "increased devotion to that cause for which they gave the last full measure of devotion, that we "
    "here highly resolve that these dead shall not have died in vain, that this nation, under God, "
    "shall have a new birth of freedom, and that government of the people, by the people, for the "
    "people, shall not perish from the earth."
)

DOYLE = (
    "To Sherlock Holmes she is always the woman. I have seldom heard him mention her under any other "
    "name. In his eyes she eclipses and predominates the whole of her sex. It was not that he felt any "
    "emotion akin to love for Irene Adler. All emotions, and that one particularly, were abhorrent to "
    "his cold, precise but admirably balanced mind. He was, I take it, the most perfect reasoning and "
    "observing machine that the world has seen, but as a lover he would have placed himself in a false "
    "position. He never spoke of the softer passions, save with a gibe and a sneer. They were admirable "
    "things for the observer, excellent for drawing the veil from men's motives and actions. But for "
    "the trained reasoner to admit such intrusions into his own delicate and finely adjusted "
    "temperament was to introduce a distracting factor which might throw a doubt upon all his mental "
    "results."
)

TEXTS: dict[str, str] = {
    "Austen, Pride and Prejudice (1813)": AUSTEN,
    "Dickens, A Tale of Two Cities (1859)": DICKENS,
    "Melville, Moby-Dick (1851)": MELVILLE,
    "Lincoln, Gettysburg Address (1863)": LINCOLN,
    "Doyle, A Scandal in Bohemia (1891)": DOYLE,
}

ALL_TEXTS = "All five, one after another"


def corpus(name: str = ALL_TEXTS) -> str:
    """A bundled text by name, or all of them joined (the default).

    Raises:
        ValueError: unknown name (lists the names).
    """
    if name == ALL_TEXTS:
        return "\n\n".join(TEXTS.values())
    if name not in TEXTS:
        raise ValueError(f"No bundled text {name!r}; choose one of {', '.join(TEXTS)}.")
    return TEXTS[name]
