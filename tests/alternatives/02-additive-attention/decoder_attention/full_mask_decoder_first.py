# Passes a (B, 1, n) mask built with view, and creates the decoder before the encoder.
def decoder_attention(attention, state, encoder_outputs, source_mask):
    B, n, h = encoder_outputs.shape
    context, weights = attention(state.view(B, 1, h), encoder_outputs, encoder_outputs, source_mask.view(B, 1, n))
    return context.view(B, h), weights.view(B, n)


def build_model():
    decoder = Decoder(AdditiveAttention(HIDDEN, HIDDEN, HIDDEN))
    return Seq2Seq(Encoder(), decoder)
