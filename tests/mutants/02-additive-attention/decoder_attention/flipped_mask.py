# Passes the padding mask with the wrong polarity: attends to padding only.
def decoder_attention(attention, state, encoder_outputs, source_mask):
    context, weights = attention(state[:, None, :], encoder_outputs, encoder_outputs, ~source_mask[:, None, :])
    return context[:, 0], weights[:, 0]


def build_model():
    return Seq2Seq(Encoder(), Decoder(AdditiveAttention(HIDDEN, HIDDEN, HIDDEN)))
